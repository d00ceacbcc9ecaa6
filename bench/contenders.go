package main

import (
	"context"
	"sync"

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
}

// contenders returns every pool compared, in report order. The
// hand-written pool is the baseline: what is possible with one channel.
func contenders() []contender {
	return []contender{
		{"crew SmallestMailbox", crewPool(crew.SmallestMailbox)},
		{"crew RoundRobin", crewPool(crew.RoundRobin)},
		{"crew Random", crewPool(crew.Random)},
		{"hand-written (shared chan)", startChannelPool},
		{"errgroup SetLimit", startErrgroup},
		{"conc pool", startConc},
		{"ants v2", startAnts},
		{"pond v2", startPond},
	}
}

const baselineName = "hand-written (shared chan)"

// crewPool runs func() jobs through a typed crew pool with the default
// mailbox and queue size: no wrapper closure per job.
func crewPool(strategy func() crew.Strategy) func(int) runner {
	return func(workers int) runner {
		p := crew.NewPool(workers, func(_ context.Context, job func()) error {
			job()
			return nil
		}, crew.WithStrategy(strategy()))
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

// channelPool is the baseline: workers goroutines reading one channel with
// a buffer of one job per worker.
type channelPool struct {
	jobs chan func()
	wg   sync.WaitGroup
}

func startChannelPool(workers int) runner {
	p := &channelPool{jobs: make(chan func(), workers)}
	for range workers {
		p.wg.Go(func() {
			for job := range p.jobs {
				job()
			}
		})
	}
	return p
}

func (p *channelPool) submit(job func()) { p.jobs <- job }

func (p *channelPool) wait() {
	close(p.jobs)
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
