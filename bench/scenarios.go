package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"
)

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
	r := rand.New(rand.NewPCG(seed, 0x63726577))
	d := make([]time.Duration, n)
	for i := range d {
		d[i] = shortJob
		if r.Float64() < longRate {
			d[i] = longJob
		}
	}
	return d
}

// overheadResult is one contender's cost per no-op job.
type overheadResult struct {
	name                 string
	submitters           int
	nsPerJob, allocsPJob float64
}

func noop() {}

// overhead runs jobs no-op jobs through each contender with workers
// workers, from submitters goroutines, runs times, interleaving the
// contenders run by run so that the machine's drift hits all of them
// alike, and keeps the median run of each.
func overhead(cs []contender, workers, submitters, jobs, runs int, progress func(string)) []overheadResult {
	ns := make([][]float64, len(cs))
	allocs := make([][]float64, len(cs))
	for run := range runs {
		for i, c := range cs {
			progress(c.name)
			var before, after runtime.MemStats
			runtime.GC()
			start := time.Now()
			r := c.start(workers)
			// Allocations count from the pool's start to the last Submit:
			// the steady state, without the pool's own set-up and tear-down.
			runtime.ReadMemStats(&before)
			var wg sync.WaitGroup
			for s := range submitters {
				n := jobs / submitters
				if s == 0 {
					n += jobs % submitters
				}
				wg.Go(func() {
					for range n {
						r.submit(noop)
					}
				})
			}
			wg.Wait()
			runtime.ReadMemStats(&after)
			r.wait()
			elapsed := time.Since(start)
			ns[i] = append(ns[i], float64(elapsed.Nanoseconds())/float64(jobs))
			allocs[i] = append(allocs[i], float64(after.Mallocs-before.Mallocs)/float64(jobs))
			_ = run
		}
	}
	out := make([]overheadResult, len(cs))
	for i, c := range cs {
		out[i] = overheadResult{c.name, submitters, median(ns[i]), median(allocs[i])}
	}
	return out
}

// burstResult is one contender's makespan for a burst of uneven jobs.
type burstResult struct {
	name     string
	makespan time.Duration
	ratio    float64 // to the lower bound
}

// burst submits every job at once, from one goroutine, and measures how
// long the pool takes to run them all: its makespan, against the lower
// bound max(sum/workers, longest job).
func burst(cs []contender, workers, jobs, runs int, progress func(string)) ([]burstResult, time.Duration) {
	d := jobTimes(jobs, 2)
	var sum, longest time.Duration
	for _, x := range d {
		sum += x
		longest = max(longest, x)
	}
	bound := max(sum/time.Duration(workers), longest)
	spans := make([][]float64, len(cs))
	for range runs {
		for i, c := range cs {
			progress(c.name)
			start := time.Now()
			r := c.start(workers)
			for _, x := range d {
				r.submit(func() { time.Sleep(x) })
			}
			r.wait()
			spans[i] = append(spans[i], float64(time.Since(start)))
		}
	}
	out := make([]burstResult, len(cs))
	for i, c := range cs {
		m := time.Duration(median(spans[i]))
		out[i] = burstResult{c.name, m, float64(m) / float64(bound)}
	}
	return out, bound
}

// streamResult is one contender's time in system at one load: the median
// over the runs of each percentile, and the spread of p99 over the runs.
type streamResult struct {
	name           string
	load           float64
	p50, p99, p999 time.Duration
	p99Min, p99Max time.Duration
}

// streamSeeds returns the seeds of one run of the streaming scenario: of
// its job times, and of its arrivals. Each run draws its own jobs and
// arrivals; every contender in a run gets the same.
func streamSeeds(run int) (jobs, arrivals uint64) {
	return 1000 + uint64(run), 2000 + uint64(run)
}

// stream submits jobs as a Poisson stream at load times the pool's
// capacity (workers divided by the mean of the drawn job times, in jobs per
// second), from one goroutine, and measures each job's time in system from
// its scheduled arrival, so that a Submit that blocks counts, to the job's
// end. It does so runs times, each run with its own seeded job times and
// arrivals and the contenders one after another within it, and reports the
// median over the runs of each percentile.
func stream(cs []contender, workers, jobs, runs int, load float64, progress func(string)) []streamResult {
	p50, p99, p999 := make([][]float64, len(cs)), make([][]float64, len(cs)), make([][]float64, len(cs))
	for run := range runs {
		jobSeed, arrivalSeed := streamSeeds(run)
		d := jobTimes(jobs, jobSeed)
		r := rand.New(rand.NewPCG(arrivalSeed, uint64(load*1000)))
		rate := load * float64(workers) / meanOf(d).Seconds() // jobs per second
		arrival := make([]time.Duration, jobs)
		var t float64
		for i := range arrival {
			t += r.ExpFloat64() / rate
			arrival[i] = time.Duration(t * float64(time.Second))
		}
		for i, c := range cs {
			progress(fmt.Sprintf("run %d/%d: %s", run+1, runs, c.name))
			tis := timeInSystem(c, workers, d, arrival)
			p50[i] = append(p50[i], quantile(tis, 0.50))
			p99[i] = append(p99[i], quantile(tis, 0.99))
			p999[i] = append(p999[i], quantile(tis, 0.999))
		}
	}
	out := make([]streamResult, len(cs))
	for i, c := range cs {
		m := time.Duration(median(p99[i])) // sorts p99[i]
		out[i] = streamResult{c.name, load,
			time.Duration(median(p50[i])), m, time.Duration(median(p999[i])),
			time.Duration(p99[i][0]), time.Duration(p99[i][len(p99[i])-1])}
	}
	return out
}

// timeInSystem runs job j, sleeping d[j], through a pool of c at its
// arrival[j] after the start, and returns the jobs' times in system,
// sorted.
func timeInSystem(c contender, workers int, d, arrival []time.Duration) []float64 {
	jobs := len(d)
	end := make([]time.Duration, jobs)
	p := c.start(workers)
	start := time.Now()
	for j := range jobs {
		if wait := arrival[j] - time.Since(start); wait > 0 {
			time.Sleep(wait)
		}
		p.submit(func() {
			time.Sleep(d[j])
			end[j] = time.Since(start)
		})
	}
	p.wait()
	tis := make([]float64, jobs)
	for j := range tis {
		tis[j] = float64(end[j] - arrival[j])
	}
	slices.Sort(tis)
	return tis
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

// median returns the middle of xs (the mean of the two middle ones for an
// even count). It sorts xs.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// quantile returns the q-quantile of sorted xs, by the nearest rank.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
