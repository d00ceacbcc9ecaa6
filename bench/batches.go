package main

import (
	"context"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alitto/pond/v2"
	"golang.org/x/sync/errgroup"

	"github.com/crewlib/crew"
)

// The shape of the batches scenario: batchClients goroutines, each running
// requests one after another; each request fans out 1..batchMaxJobs jobs
// (uniform) and waits for them; each job spins a CPU loop of
// batchMinSpin..batchMaxSpin (uniform). batchLimit is the per-request limit
// of the limited contenders.
const (
	batchClients = 64
	batchMaxJobs = 16
	batchLimit   = 4
	batchMinSpin = 2 * time.Microsecond
	batchMaxSpin = 10 * time.Microsecond

	// batchRoomyQueue is the queue size of the crew contender whose pool
	// has room for more jobs than the default.
	batchRoomyQueue = 16
)

// batchResult is one contender's throughput and per-request latency with
// many concurrent request-batches: each the median over the runs, and the
// spread of p99 over them.
type batchResult struct {
	name                   string
	requestsPerS, jobsPerS float64
	p50, p99               time.Duration
	p99Min, p99Max         time.Duration
	p99s                   []float64 // each run's p99 in ns, for the advice
}

// A batcher runs requests on one pool (or, for errgroup, on none): request
// submits a job per element n of work, which calls job(n) (spin, but for
// tests), and returns once they have all returned; it is safe for
// concurrent use. tenant names the client a request comes from, for the
// contenders that share the pool by tenant (crew WithFairShare: the
// tenant's batches form one share); "" is a request of its own, and the
// other contenders ignore it. close releases the pool once every request
// has returned.
type batcher interface {
	request(tenant string, work []int, job func(n int))
	close()
}

// A batchContender is a way of running request-batches under comparison.
type batchContender struct {
	name  string
	start func(workers int) batcher
}

const (
	batchCrewName      = "crew NewBatch, one pool"
	batchCrewRoomName  = "crew NewBatch, one pool, WithQueueSize(16)"
	batchCrewLimitName = "crew NewBatch WithLimit(4), one pool"
	batchErrgroupName  = "errgroup per request, SetLimit(4)"
	batchPondName      = "pond v2 NewGroup, one pool"
)

// batchContenders returns the contenders of the batches scenario, in report
// order.
func batchContenders() []batchContender {
	return []batchContender{
		{batchCrewName, func(w int) batcher { return crewBatcher{p: crew.NewGroup(w)} }},
		{batchCrewRoomName, func(w int) batcher {
			return crewBatcher{p: crew.NewGroup(w, crew.WithQueueSize(batchRoomyQueue))}
		}},
		{batchCrewLimitName, func(w int) batcher {
			return crewBatcher{p: crew.NewGroup(w), opts: []crew.Option{crew.WithLimit(batchLimit)}}
		}},
		{batchErrgroupName, func(int) batcher { return errgroupBatcher{} }},
		{batchPondName, func(w int) batcher { return pondBatcher{pond.NewPool(w)} }},
	}
}

// crewBatcher runs each request as a batch of one shared crew pool, made
// with opts. If fair (the pool is WithFairShare), a request with a tenant
// is a batch WithTenant(tenant) too.
type crewBatcher struct {
	p    *crew.Pool[crew.Job]
	opts []crew.Option
	fair bool
}

func (c crewBatcher) request(tenant string, work []int, job func(int)) {
	opts := c.opts
	if c.fair && tenant != "" {
		opts = append(slices.Clip(opts), crew.WithTenant(tenant))
	}
	b, ctx := c.p.NewBatch(context.Background(), opts...)
	for _, n := range work {
		if err := b.Submit(ctx, func(context.Context) error {
			job(n)
			return nil
		}); err != nil {
			panic(err) // cannot happen: the pool is open and no job fails
		}
	}
	if err := b.Wait(); err != nil {
		panic(err)
	}
}

func (c crewBatcher) close() {
	if err := c.p.Wait(); err != nil {
		panic(err)
	}
}

// errgroupBatcher runs each request in an errgroup of its own, limited to
// batchLimit goroutines: there is no limit across requests.
type errgroupBatcher struct{}

func (errgroupBatcher) request(_ string, work []int, job func(int)) {
	g := new(errgroup.Group)
	g.SetLimit(batchLimit)
	for _, n := range work {
		g.Go(func() error {
			job(n)
			return nil
		})
	}
	_ = g.Wait()
}

func (errgroupBatcher) close() {}

// pondBatcher runs each request as a task group of one shared pond pool,
// whose queue has no bound.
type pondBatcher struct{ p pond.Pool }

func (c pondBatcher) request(_ string, work []int, job func(int)) {
	g := c.p.NewGroup()
	for _, n := range work {
		g.Submit(func() { job(n) })
	}
	if err := g.Wait(); err != nil {
		panic(err)
	}
}

func (c pondBatcher) close() { c.p.StopAndWait() }

// spinSink keeps the compiler from dropping spin's loop.
var spinSink atomic.Uint64

// spin runs n rounds of xorshift: CPU work of a fixed cost, whatever the
// scheduler does meanwhile, unlike a spin until a deadline, which a
// preempted goroutine would cut short.
func spin(n int) {
	x := uint64(n) | 1
	for range n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	if x == 0 { // never: xorshift keeps x nonzero
		spinSink.Add(1)
	}
}

// spinsPerMicrosecond measures how many rounds of spin this machine runs in
// a microsecond: the fastest of a few tries, on a machine at rest.
func spinsPerMicrosecond() float64 {
	const n = 1 << 22
	best := time.Duration(1<<63 - 1)
	for range 5 {
		start := time.Now()
		spin(n)
		best = min(best, time.Since(start))
	}
	return n / (float64(best) / float64(time.Microsecond))
}

// emptyBatchCost is what NewBatch and Wait cost for a batch with no job,
// beside what errgroup.WithContext and Wait cost for a group with none:
// ns per batch, and the most allocations per batch of any run.
type emptyBatchCost struct {
	ns, errgroupNs         float64
	allocs, errgroupAllocs int64
}

// measureEmptyBatch measures an empty batch on an idle pool of workers
// workers, and an empty errgroup with a context, runs times each,
// interleaved, keeping the medians.
func measureEmptyBatch(workers, runs int) emptyBatchCost {
	p := crew.NewGroup(workers)
	defer p.Wait()
	var ns, egNs []float64
	var c emptyBatchCost
	// bench times new-then-Wait on an empty group, no job in it.
	bench := func(newAndWait func(context.Context) error) testing.BenchmarkResult {
		return testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for range b.N {
				if err := newAndWait(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	ways := []func(context.Context) error{
		func(ctx context.Context) error {
			batch, _ := p.NewBatch(ctx)
			return batch.Wait()
		},
		func(ctx context.Context) error {
			g, _ := errgroup.WithContext(ctx)
			return g.Wait()
		},
	}
	got := interleave(runs, []string{"an empty batch", "an empty errgroup"}, func(string) {}, each(func(i int) testing.BenchmarkResult {
		return bench(ways[i])
	}))
	for i, rs := range got {
		for _, r := range rs {
			if i == 0 {
				ns, c.allocs = append(ns, float64(r.NsPerOp())), max(c.allocs, r.AllocsPerOp())
			} else {
				egNs, c.errgroupAllocs = append(egNs, float64(r.NsPerOp())), max(c.errgroupAllocs, r.AllocsPerOp())
			}
		}
	}
	c.ns, c.errgroupNs = median(ns), median(egNs)
	return c
}

// batchWork draws the requests of one run, with the run's seed: each
// request's jobs, as rounds of spin.
func batchWork(requests int, perMicro float64, run int) [][]int {
	r := rand.New(rand.NewPCG(3000+uint64(run), 0x6261746368))
	work := make([][]int, requests)
	for i := range work {
		work[i] = make([]int, 1+r.IntN(batchMaxJobs))
		for j := range work[i] {
			work[i][j] = batchJob(r, perMicro)
		}
	}
	return work
}

// batchJob draws a job's rounds of spin: batchMinSpin to batchMaxSpin
// (uniform) at perMicro rounds per µs.
func batchJob(r *rand.Rand, perMicro float64) int {
	d := batchMinSpin + time.Duration(r.Float64()*float64(batchMaxSpin-batchMinSpin))
	return int(perMicro * float64(d) / float64(time.Microsecond))
}

// batches runs requests request-batches from batchClients goroutines,
// each taking the next request of the run's sequence as soon as its last
// one returned, through each contender with workers workers, and measures
// the throughput (from the first request to the last one's return; the
// pool's start and close are left out, as a long-lived pool's would be) and
// each request's latency, from its batch's creation to the return of its
// Wait. It does so runs times, each run with its own seeded requests, the
// same for every contender within the run, the contenders one after
// another within each run, and reports the median of each figure over the
// runs. It returns the results and the measured spin rate.
func batches(workers, requests, runs int, progress func(string)) ([]batchResult, float64) {
	cs := batchContenders()
	runtime.GC()
	perMicro := spinsPerMicrosecond()
	type figures struct{ reqS, jobS, p50, p99 float64 }
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.name
	}
	got := interleave(runs, names, progress, func(run int) func(i int) figures {
		work := batchWork(requests, perMicro, run)
		jobs := 0
		for _, w := range work {
			jobs += len(w)
		}
		return func(i int) figures {
			runtime.GC()
			lat, elapsed := runBatches(cs[i].start(workers), work)
			return figures{float64(requests) / elapsed.Seconds(), float64(jobs) / elapsed.Seconds(), quantile(lat, 0.50), quantile(lat, 0.99)}
		}
	})
	out := make([]batchResult, len(cs))
	for i, c := range cs {
		p99s := column(got[i], func(x figures) float64 { return x.p99 })
		sorted := slices.Sorted(slices.Values(p99s))
		out[i] = batchResult{c.name, medianOf(got[i], func(x figures) float64 { return x.reqS }), medianOf(got[i], func(x figures) float64 { return x.jobS }),
			time.Duration(medianOf(got[i], func(x figures) float64 { return x.p50 })), time.Duration(median(sorted)),
			time.Duration(sorted[0]), time.Duration(sorted[len(sorted)-1]), p99s}
	}
	return out, perMicro
}

// runBatches runs the requests of work through b from batchClients
// goroutines, closes b, and returns the requests' latencies, sorted, and
// the time from the first request to the last one's return.
func runBatches(b batcher, work [][]int) ([]float64, time.Duration) {
	lat, elapsed := runRequests(b, work, batchClients)
	b.close()
	return lat, elapsed
}

// runRequests runs the requests of work through b, each of its own (no
// tenant), from clients goroutines, each taking the next request of work
// as soon as its last one returned, and returns the requests' latencies,
// sorted, and the time from the first request to the last one's return.
func runRequests(b batcher, work [][]int, clients int) ([]float64, time.Duration) {
	lat := make([]float64, len(work))
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(work) {
					return
				}
				t := time.Now()
				b.request("", work[i], spin)
				lat[i] = float64(time.Since(t))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	return lat, elapsed
}
