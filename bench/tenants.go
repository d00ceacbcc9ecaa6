package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alitto/pond/v2"

	"github.com/crewlib/crew"
)

// The tenants scenario: the batches scenario's small requests from
// tenantsSmallClients clients, beside one noisy client sending requests of
// tenantsNoisyJobs such jobs one after another, on one pool first come,
// first served, and WithFairShare; errgroup per request and pond's groups
// beside. And two checks of WithFairShare alone: that weights 1 and 3 get
// a quarter and three quarters of the run time, and what fair sharing
// costs per job.
const (
	tenantsSmallClients = batchClients - 1 // and the noisy client: 64 in all
	tenantsNoisyJobs    = 2000
	tenantsNoisyTenant  = "noisy"
	// tenantsNoisyDraws is how many noisy requests each run draws; the
	// noisy client sends them in turn, for as long as the small clients
	// run.
	tenantsNoisyDraws = 4

	// The weights check: two tenants of these weights, each with
	// weightsBatches batches and weightsSubmitters goroutines submitting
	// weightsJob spins to them, so that each always has a Submit blocked
	// on the full pool. It takes that many: where the pool has more
	// workers than the machine has CPUs, the spinning workers keep a
	// submitter whose Submit returned off the CPU for a scheduler time
	// slice or more, and with 4 or 16 submitters a tenant was often left
	// with none blocked, and so with no share to be served.
	weightsLight, weightsHeavy = 1, 3
	weightsBatches             = 4
	weightsSubmitters          = 64
	weightsJob                 = time.Millisecond
)

const (
	tenantsFCFSName = "crew NewBatch, one pool, first come first served"
	tenantsFairName = "crew NewBatch, one pool, WithFairShare"
)

// tenantContenders returns the contenders of the tenants scenario, in
// report order: crew first come, first served, and WithFairShare, where
// the noisy client's batches are WithTenant(tenantsNoisyTenant) and each
// small request is a share of its own; errgroup per request with
// SetLimit(batchLimit), which has no limit across requests; pond's groups
// on one pool.
func tenantContenders() []batchContender {
	return []batchContender{
		{tenantsFCFSName, func(w int) batcher { return crewBatcher{p: crew.NewGroup(w)} }},
		{tenantsFairName, func(w int) batcher { return crewBatcher{p: crew.NewGroup(w, crew.WithFairShare()), fair: true} }},
		{batchErrgroupName, func(int) batcher { return errgroupBatcher{} }},
		{batchPondName, func(w int) batcher { return pondBatcher{pond.NewPool(w)} }},
	}
}

// tenantsResult is one contender's figures without the noisy client and
// with it.
type tenantsResult struct {
	name         string
	alone, noisy tenantsFigures
}

// tenantsFigures are the medians over the runs of one contender's figures
// in one setting.
type tenantsFigures struct {
	p50, p99      time.Duration // the small requests' latency
	noisyJobsPerS float64       // the noisy client's jobs ended while the small clients ran, per second; 0 alone
	jobsPerS      float64       // every job ended while the small clients ran, per second
}

// tenantsRun is what one run of one contender measured.
type tenantsRun struct {
	lat              []float64 // the small requests' latencies (ns), sorted
	elapsed          time.Duration
	smallJobs, noisy int64 // the small requests' jobs, and the noisy client's that ended within elapsed
}

// tenants runs the small requests of each run through each contender
// with workers workers, first alone, then beside the noisy client, runs
// times, each run with its own seeded requests, the same for every
// contender within the run, the contenders one after another within each
// setting of each run, and reports the median of each figure over the
// runs. It returns the results and the measured spin rate.
func tenants(workers, requests, runs int, progress func(string)) ([]tenantsResult, float64) {
	cs := tenantContenders()
	runtime.GC()
	perMicro := spinsPerMicrosecond()
	// samples[setting][contender][figure] over the runs; setting 0 is
	// alone, 1 with the noisy client; figures as in tenantsFigures.
	var samples [2][][4][]float64
	for i := range samples {
		samples[i] = make([][4][]float64, len(cs))
	}
	for run := range runs {
		small, noisy := batchWork(requests, perMicro, run), noisyWork(perMicro, run)
		for setting, heavy := range [][][]int{nil, noisy} {
			for i, c := range cs {
				what := "alone"
				if heavy != nil {
					what = "with the noisy client"
				}
				progress(fmt.Sprintf("run %d/%d, %s: %s", run+1, runs, what, c.name))
				runtime.GC()
				x := runTenants(c.start(workers), small, heavy)
				s := &samples[setting][i]
				secs := x.elapsed.Seconds()
				s[0] = append(s[0], quantile(x.lat, 0.50))
				s[1] = append(s[1], quantile(x.lat, 0.99))
				s[2] = append(s[2], float64(x.noisy)/secs)
				s[3] = append(s[3], float64(x.smallJobs+x.noisy)/secs)
			}
		}
	}
	figures := func(s [4][]float64) tenantsFigures {
		return tenantsFigures{time.Duration(median(s[0])), time.Duration(median(s[1])), median(s[2]), median(s[3])}
	}
	out := make([]tenantsResult, len(cs))
	for i, c := range cs {
		out[i] = tenantsResult{c.name, figures(samples[0][i]), figures(samples[1][i])}
	}
	return out, perMicro
}

// noisyWork draws the noisy client's requests of one run, with the run's
// seed: tenantsNoisyDraws requests of tenantsNoisyJobs jobs each, drawn as
// batchWork draws a small request's jobs.
func noisyWork(perMicro float64, run int) [][]int {
	r := rand.New(rand.NewPCG(4000+uint64(run), 0x6e6f697379))
	work := make([][]int, tenantsNoisyDraws)
	for i := range work {
		work[i] = make([]int, tenantsNoisyJobs)
		for j := range work[i] {
			work[i][j] = batchJob(r, perMicro)
		}
	}
	return work
}

// runTenants runs the small requests through b from tenantsSmallClients
// goroutines as runRequests does, and, unless noisy is nil, beside them
// one more goroutine, the noisy client, that sends the requests of noisy
// in turn, as tenant tenantsNoisyTenant, until the small clients are done;
// then it waits for the noisy client's last request and closes b. The
// noisy jobs counted are those that ended while the small clients ran.
func runTenants(b batcher, small, noisy [][]int) tenantsRun {
	var x tenantsRun
	for _, w := range small {
		x.smallJobs += int64(len(w))
	}
	var stop atomic.Bool
	var ended atomic.Int64
	noisyJob := func(n int) {
		spin(n)
		ended.Add(1)
	}
	// The noisy client, started first and ended by stop: this function
	// owns it and waits for it before it closes b.
	var wg sync.WaitGroup
	if noisy != nil {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				b.request(tenantsNoisyTenant, noisy[i%len(noisy)], noisyJob)
			}
		})
	}
	x.lat, x.elapsed = runRequests(b, small, tenantsSmallClients)
	x.noisy = ended.Load()
	stop.Store(true)
	wg.Wait()
	b.close()
	return x
}

// weightsResult is what the weights check measured: each tenant's run
// time while both kept the pool saturated.
type weightsResult struct {
	weights []int
	runTime []time.Duration // the sum of BatchStats.RunTime over the tenant's batches
	took    time.Duration   // the time measured over
	jobs    []int64         // the tenant's jobs that ended in it
}

// share returns tenant i's share of the run time, from 0 to 1.
func (w weightsResult) share(i int) float64 {
	var sum time.Duration
	for _, t := range w.runTime {
		sum += t
	}
	return float64(w.runTime[i]) / float64(sum)
}

// weightsCheck runs the weights check on a pool WithFairShare of workers
// workers: a tenant per weight of weights, each with weightsBatches
// batches (WithTenant, WithWeight) and weightsSubmitters goroutines spread
// over them, submitting jobs that spin jobSpin rounds as fast as the pool
// takes them. After a tenth of d to settle, it measures each tenant's run time and ended jobs
// over d, from the batches' Stats, while both are backlogged; then it
// stops the submitters and waits for the batches and the pool.
func weightsCheck(workers int, weights []int, d time.Duration, jobSpin int) weightsResult {
	p := crew.NewGroup(workers, crew.WithFairShare())
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	job := func(context.Context) error {
		spin(jobSpin)
		return nil
	}
	// The submitters, owned by this function: each ends once stop makes its
	// blocked (or next) Submit return ctx.Err().
	var wg sync.WaitGroup
	batches := make([][]*crew.Batch[crew.Job], len(weights))
	for t, w := range weights {
		for range weightsBatches {
			b, _ := p.NewBatch(context.Background(), crew.WithTenant(fmt.Sprint("tenant", t)), crew.WithWeight(w))
			batches[t] = append(batches[t], b)
			for range weightsSubmitters / weightsBatches {
				wg.Go(func() {
					for b.Submit(ctx, job) == nil { // until ctx ends
					}
				})
			}
		}
	}
	time.Sleep(d / 10)
	before, start := tenantStats(batches), time.Now()
	time.Sleep(d)
	after, took := tenantStats(batches), time.Since(start)
	stop()
	wg.Wait()
	for _, bs := range batches {
		for _, b := range bs {
			if err := b.Wait(); err != nil {
				panic(err) // cannot happen: no job fails
			}
		}
	}
	if err := p.Wait(); err != nil {
		panic(err)
	}
	w := weightsResult{weights: weights, took: took}
	for t := range weights {
		w.runTime = append(w.runTime, after[t].RunTime-before[t].RunTime)
		w.jobs = append(w.jobs, after[t].Completed-before[t].Completed)
	}
	return w
}

// tenantStats sums the Stats of each tenant's batches: its run time and
// its ended jobs.
func tenantStats(tenants [][]*crew.Batch[crew.Job]) []crew.BatchStats {
	out := make([]crew.BatchStats, len(tenants))
	for t, bs := range tenants {
		for _, b := range bs {
			s := b.Stats()
			out[t].RunTime += s.RunTime
			out[t].Completed += s.Completed
		}
	}
	return out
}

// fairCost is the cost per no-op job through one batch of a first come,
// first served pool and of a pool WithFairShare.
type fairCost struct {
	fifoNs, fairNs         float64
	fifoAllocs, fairAllocs float64 // per job, the most over the runs
}

// measureFairCost measures fairCost with testing.Benchmark, as go test
// -bench does, on pools of workers workers, the two interleaved run by
// run; the median of runs.
func measureFairCost(workers, runs int) fairCost {
	var ns, allocs [2][]float64
	for range runs {
		for i, opts := range [][]crew.Option{nil, {crew.WithFairShare()}} {
			r := testing.Benchmark(func(b *testing.B) { benchOneBatch(b, workers, opts) })
			ns[i] = append(ns[i], float64(r.T.Nanoseconds())/float64(r.N))
			allocs[i] = append(allocs[i], float64(r.MemAllocs)/float64(r.N))
		}
	}
	return fairCost{median(ns[0]), median(ns[1]), maxOf(allocs[0]), maxOf(allocs[1])}
}

func nopInt(context.Context, int) error { return nil }

// benchOneBatch sends b.N no-op jobs through one batch of a pool of
// workers workers made with opts; the time and allocations run from the
// first Submit to the batch's Wait's return.
func benchOneBatch(b *testing.B, workers int, opts []crew.Option) {
	ctx := context.Background()
	p := crew.NewPool(workers, nopInt, opts...)
	batch, _ := p.NewBatch(ctx)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := batch.Submit(ctx, i); err != nil {
			b.Fatal(err)
		}
	}
	if err := batch.Wait(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if err := p.Wait(); err != nil {
		b.Fatal(err)
	}
}

// maxOf returns the largest of xs, or 0 if there is none.
func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
