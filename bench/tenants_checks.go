package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/crewlib/crew"
)

// The tenants scenario's checks of WithFairShare alone: that weights 1
// and 3 get a quarter and three quarters of the run time, and what fair
// sharing costs per job.
//
// The weights check: two tenants of these weights, each with
// weightsBatches batches and weightsSubmitters goroutines submitting
// weightsJob spins to them, so that each always has a Submit blocked on
// the full pool. It takes that many: where the pool has more workers than
// the machine has CPUs, the spinning workers keep a submitter whose Submit
// returned off the CPU for a scheduler time slice or more, and with 4 or
// 16 submitters a tenant was often left with none blocked, and so with no
// share to be served.
const (
	weightsLight, weightsHeavy = 1, 3
	weightsBatches             = 4
	weightsSubmitters          = 64
	weightsJob                 = time.Millisecond
)

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
// takes them. After a tenth of d to settle, it measures each tenant's run
// time and ended jobs over d, from the batches' Stats, while both are
// backlogged; then it stops the submitters and waits for the batches and
// the pool.
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
	opts := [][]crew.Option{nil, {crew.WithFairShare()}}
	got := interleave(runs, []string{"first come, first served", "WithFairShare"}, func(string) {}, each(func(i int) testing.BenchmarkResult {
		return testing.Benchmark(func(b *testing.B) { benchOneBatch(b, workers, opts[i]) })
	}))
	var ns, allocs [2][]float64
	for i, rs := range got {
		for _, r := range rs {
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
