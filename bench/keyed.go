package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"github.com/crewlib/crew"
)

// keyedResult is one placement's time in system and makespan for a keyed
// stream.
type keyedResult struct {
	name          string
	p50, p99      time.Duration
	makespan      time.Duration
	orderBreaches int64   // jobs that ran before an earlier job of their key, or beside one
	busiest       float64 // the busiest worker's jobs over the mean worker's
}

type keyedJob struct {
	key, idx, seq int
}

// keyed streams jobs with Zipf(s=1.1) keys over 10,000 keys, the uneven job
// mix, at load times the capacity of workers workers, through crew pools
// with WithKey, WithConsistentHash and plain SmallestMailbox (which ignores
// the keys' order), and measures the time in system from the scheduled
// arrival, the makespan, how often a key's order was broken, and how
// evenly the workers shared the jobs (from the pool's Stats). It does so
// runs times, each run with its own seeds (the same for every placement
// within a run; WithConsistentHash also draws its own hash seed), and
// reports the median of each figure over the runs, and the breaches of all.
func keyed(workers, jobs, runs int, load float64, progress func(string)) []keyedResult {
	names := []string{"crew WithKey", "crew WithConsistentHash", "crew SmallestMailbox (ignores order)"}
	p50, p99, span, busiest := make([][]float64, len(names)), make([][]float64, len(names)),
		make([][]float64, len(names)), make([][]float64, len(names))
	breaches := make([]int64, len(names))
	for run := range runs {
		for i, x := range keyedRun(workers, jobs, load, uint64(run), progress) {
			p50[i] = append(p50[i], float64(x.p50))
			p99[i] = append(p99[i], float64(x.p99))
			span[i] = append(span[i], float64(x.makespan))
			busiest[i] = append(busiest[i], x.busiest)
			breaches[i] += x.orderBreaches
		}
	}
	out := make([]keyedResult, len(names))
	for i, name := range names {
		out[i] = keyedResult{name, time.Duration(median(p50[i])), time.Duration(median(p99[i])),
			time.Duration(median(span[i])), breaches[i], median(busiest[i])}
	}
	return out
}

// keyedRun is one run of keyed, with the seeds of run.
func keyedRun(workers, jobs int, load float64, run uint64, progress func(string)) []keyedResult {
	const keys = 10_000
	d := jobTimes(jobs, 5+10*run)
	r := rand.New(rand.NewPCG(6+10*run, 7))
	zipf := rand.NewZipf(r, 1.1, 1, keys-1)
	key := make([]int, jobs)
	seq := make([]int, jobs)
	next := make([]int, keys)
	for i := range key {
		key[i] = int(zipf.Uint64())
		seq[i] = next[key[i]]
		next[key[i]]++
	}
	rate := load * float64(workers) / meanOf(d).Seconds()
	arrival := make([]time.Duration, jobs)
	var t float64
	for i := range arrival {
		t += r.ExpFloat64() / rate
		arrival[i] = time.Duration(t * float64(time.Second))
	}
	keyOf := func(j keyedJob) int { return j.key }
	placements := []struct {
		name string
		opt  []crew.Option
	}{
		{"crew WithKey", []crew.Option{crew.WithKey(keyOf)}},
		{"crew WithConsistentHash", []crew.Option{crew.WithConsistentHash(keyOf)}},
		{"crew SmallestMailbox (ignores order)", nil},
	}
	out := make([]keyedResult, len(placements))
	for pi, pl := range placements {
		progress(fmt.Sprintf("%s (run %d)", pl.name, run+1))
		end := make([]time.Duration, jobs)
		last := make([]atomic.Int64, keys)
		running := make([]atomic.Int32, keys)
		for i := range last {
			last[i].Store(-1)
		}
		var breaches atomic.Int64
		var start time.Time
		p := crew.NewPool(workers, func(_ context.Context, j keyedJob) error {
			if running[j.key].Add(1) != 1 || last[j.key].Swap(int64(j.seq)) >= int64(j.seq) {
				breaches.Add(1)
			}
			time.Sleep(d[j.idx])
			running[j.key].Add(-1)
			end[j.idx] = time.Since(start)
			return nil
		}, pl.opt...)
		start = time.Now()
		for i := range jobs {
			if wait := arrival[i] - time.Since(start); wait > 0 {
				time.Sleep(wait)
			}
			if err := p.Submit(context.Background(), keyedJob{key[i], i, seq[i]}); err != nil {
				panic(err)
			}
		}
		if err := p.Wait(); err != nil {
			panic(err)
		}
		makespan := time.Since(start)
		var handled, most int64
		for _, w := range p.Stats().PerWorker {
			handled += w.Handled
			most = max(most, w.Handled)
		}
		busiest := float64(most) / (float64(handled) / float64(workers))
		tis := make([]float64, jobs)
		for i := range tis {
			tis[i] = float64(end[i] - arrival[i])
		}
		slices.Sort(tis)
		out[pi] = keyedResult{pl.name, time.Duration(quantile(tis, 0.5)), time.Duration(quantile(tis, 0.99)), makespan, breaches.Load(), busiest}
	}
	return out
}
