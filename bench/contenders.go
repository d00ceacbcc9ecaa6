package main

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alitto/pond/v2"
	"github.com/panjf2000/ants/v2"
	"github.com/sourcegraph/conc/pool"
	"golang.org/x/sync/errgroup"

	"github.com/crewlib/crew"
)

// A runner is one pool of workers as its users drive it: submit blocks
// while the pool is full (or queues without bound, if that is what the pool
// does), and wait returns once every job submitted has run. submit is safe
// for concurrent use.
type runner interface {
	submit(job func())
	wait()
}

// A contender is a worker pool under comparison.
type contender struct {
	name  string
	start func(workers int) runner
	// overheadOnly leaves the contender out of the burst and streaming
	// scenarios, where it would queue the jobs just as another one does.
	overheadOnly bool
}

// contenders returns every pool compared, in report (and chart) order. The
// hand-written pool over one channel of capacity workers is the baseline:
// what is possible with one channel.
func contenders() []contender {
	return []contender{
		{name: crewName, start: crewPool(crew.SmallestMailbox)},
		{name: "crew RoundRobin", start: crewPool(crew.RoundRobin)},
		{name: "crew Random", start: crewPool(crew.Random)},
		// The default pool holds 8×3 jobs; this one as many as chan 1024.
		{name: crew1024Name, start: crewPoolOf(crew.SmallestMailbox, 1024), overheadOnly: true},
		// The same pool, its jobs submitted through one batch: what a
		// batch's bookkeeping costs per job.
		{name: crewBatchName, start: startCrewBatch, overheadOnly: true},
		// The least a pool with crew's guarantees costs around one lock.
		{name: floorName, start: startFloor, overheadOnly: true},
		{name: baselineName, start: channelPoolOf(0)},
		// The same FIFO queue as the baseline in the burst and the
		// stream: only its overhead differs.
		{name: chan1024Name, start: channelPoolOf(1024), overheadOnly: true},
		{name: shardsName, start: startShardedPool},
		{name: errgroupName, start: startErrgroup},
		{name: concName, start: startConc},
		{name: "ants v2", start: startAnts},
		{name: "pond v2", start: startPond},
	}
}

const (
	crewName      = "crew SmallestMailbox"
	crew1024Name  = "crew SmallestMailbox, bound 1024"
	crewBatchName = "crew SmallestMailbox, one batch"
	floorName     = "floor (single-lock pool)"
	baselineName  = "hand-written (shared chan)"
	chan1024Name  = "hand-written (chan 1024)"
	shardsName    = "hand-written (round-robin shards)"
	errgroupName  = "errgroup SetLimit"
	concName      = "conc pool"
)

// crewPool runs func() jobs through a typed crew pool with the default
// backlog and bound: no wrapper closure per job.
func crewPool(strategy func() crew.Strategy) func(int) runner {
	return crewPoolOf(strategy, 0)
}

// crewPoolOf is crewPool with room for bound jobs in all (WithQueueSize),
// or the default bound if bound is 0.
func crewPoolOf(strategy func() crew.Strategy, bound int) func(int) runner {
	return func(workers int) runner {
		opts := []crew.Option{crew.WithStrategy(strategy())}
		if bound > 0 {
			opts = append(opts, crew.WithQueueSize(max(bound/workers-1, 1)))
		}
		p := crew.NewPool(workers, func(_ context.Context, job func()) error {
			job()
			return nil
		}, opts...)
		return crewRunner{p}
	}
}

type crewRunner struct{ p *crew.Pool[func()] }

func (r crewRunner) submit(job func()) {
	if err := r.p.Submit(context.Background(), job); err != nil {
		panic(err) // cannot happen: the pool is open and the context never ends
	}
}

func (r crewRunner) wait() {
	if err := r.p.Wait(); err != nil {
		panic(err)
	}
}

// crewBatchRunner submits every job through one batch of a default crew
// pool.
type crewBatchRunner struct {
	p   *crew.Pool[func()]
	b   *crew.Batch[func()]
	ctx context.Context
}

func startCrewBatch(workers int) runner {
	p := crew.NewPool(workers, func(_ context.Context, job func()) error {
		job()
		return nil
	})
	b, ctx := p.NewBatch(context.Background())
	return crewBatchRunner{p, b, ctx}
}

func (r crewBatchRunner) submit(job func()) {
	if err := r.b.Submit(r.ctx, job); err != nil {
		panic(err) // cannot happen: the batch is open and no job fails
	}
}

func (r crewBatchRunner) wait() {
	if err := r.b.Wait(); err != nil {
		panic(err)
	}
	if err := r.p.Wait(); err != nil {
		panic(err)
	}
}

// channelPool is workers goroutines ranging over one channel: the
// baseline, with a buffer of one job per worker, or with a larger buffer.
type channelPool struct {
	jobs chan func()
	wg   sync.WaitGroup
}

// channelPoolOf starts channel pools whose channel holds capacity jobs, or
// one per worker if capacity is 0.
func channelPoolOf(capacity int) func(int) runner {
	return func(workers int) runner {
		if capacity == 0 {
			capacity = workers
		}
		p := &channelPool{jobs: make(chan func(), capacity)}
		for range workers {
			p.wg.Go(func() {
				for job := range p.jobs {
					job()
				}
			})
		}
		return p
	}
}

func (p *channelPool) submit(job func()) { p.jobs <- job }

func (p *channelPool) wait() {
	close(p.jobs)
	p.wg.Wait()
}

// shardedPool is the sharded pool users write by hand: a channel per
// worker, job i sent to channel i % workers, each worker ranging over its
// own channel. Each channel holds 128 jobs, 1024 in all, as deep a queue
// as users give such a pool so that the submitter seldom waits. A long job
// holds up the jobs behind it in its shard while other workers may idle.
type shardedPool struct {
	shards []chan func()
	next   atomic.Uint64
	wg     sync.WaitGroup
}

// shardRoom is how many jobs each shard's channel holds.
const shardRoom = 128

func startShardedPool(workers int) runner {
	p := &shardedPool{shards: make([]chan func(), workers)}
	for i := range p.shards {
		jobs := make(chan func(), shardRoom)
		p.shards[i] = jobs
		p.wg.Go(func() {
			for job := range jobs {
				job()
			}
		})
	}
	return p
}

func (p *shardedPool) submit(job func()) {
	i := p.next.Add(1) - 1
	p.shards[i%uint64(len(p.shards))] <- job
}

func (p *shardedPool) wait() {
	for _, jobs := range p.shards {
		close(jobs)
	}
	p.wg.Wait()
}

type errgroupRunner struct{ g *errgroup.Group }

func startErrgroup(workers int) runner {
	g := new(errgroup.Group)
	g.SetLimit(workers)
	return errgroupRunner{g}
}

func (r errgroupRunner) submit(job func()) {
	r.g.Go(func() error {
		job()
		return nil
	})
}

func (r errgroupRunner) wait() { _ = r.g.Wait() }

type concRunner struct{ p *pool.Pool }

func startConc(workers int) runner { return concRunner{pool.New().WithMaxGoroutines(workers)} }

func (r concRunner) submit(job func()) { r.p.Go(job) }
func (r concRunner) wait()             { r.p.Wait() }

// antsRunner waits with a WaitGroup, as ants' own examples do: its pool
// has no Wait.
type antsRunner struct {
	p  *ants.Pool
	wg sync.WaitGroup
}

func startAnts(workers int) runner {
	p, err := ants.NewPool(workers)
	if err != nil {
		panic(err)
	}
	return &antsRunner{p: p}
}

func (r *antsRunner) submit(job func()) {
	r.wg.Add(1)
	if err := r.p.Submit(func() {
		defer r.wg.Done()
		job()
	}); err != nil {
		panic(err)
	}
}

func (r *antsRunner) wait() {
	r.wg.Wait()
	r.p.Release()
}

type pondRunner struct{ p pond.Pool }

func startPond(workers int) runner { return pondRunner{pond.NewPool(workers)} }

func (r pondRunner) submit(job func()) { r.p.Submit(job) }
func (r pondRunner) wait()             { r.p.StopAndWait() }

// names returns the contenders' names.
func names(cs []contender) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}

// queueing returns the contenders of the burst and streaming scenarios:
// those that do not only repeat another's queue there.
func queueing() []contender {
	return slices.DeleteFunc(contenders(), func(c contender) bool { return c.overheadOnly })
}

// The uneven job mix of the burst and streaming scenarios: 95% of jobs
// sleep 2 ms, 5% sleep 100 ms (time.Sleep has ~1 ms granularity here, so
// nothing shorter). Its mean is 6.9 ms.
const (
	shortJob = 2 * time.Millisecond
	longJob  = 100 * time.Millisecond
	longRate = 0.05
	meanJob  = time.Duration(float64(shortJob)*(1-longRate) + float64(longJob)*longRate)
)

// jobTimes draws n job durations from the mix, with a fixed seed so that
// every contender gets the same sequence.
func jobTimes(n int, seed uint64) []time.Duration {
	return drawMix(rand.New(rand.NewPCG(seed, 0x63726577)), n, shortJob, longJob, longRate)
}

// meanOf returns the mean of the drawn job times, so that a load is that
// fraction of the capacity for these jobs, not for the mix's expectation
// (4,000 draws can be 10% off).
func meanOf(d []time.Duration) time.Duration {
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}
