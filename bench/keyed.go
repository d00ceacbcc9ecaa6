package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"github.com/crewlib/crew"
	"gonum.org/v1/plot/vg"
)

// keyedResult is one placement's time in system and makespan for a keyed
// stream.
type keyedResult struct {
	name          string
	p50, p99      time.Duration
	makespan      time.Duration
	orderBreaches int64   // jobs that ran before an earlier job of their key, or beside one
	busiest       float64 // the busiest worker's jobs over the mean worker's
	// p50s and p99s are each run's, for the advice (nil in one run's result).
	p50s, p99s []float64
}

type keyedJob struct {
	key, idx, seq int
}

// keyedScenario streams keyed jobs through crew's placements and checks
// their order and latency.
type keyedScenario struct {
	none
	keyedJobs, keyedWorkers, keyedRuns int
	keyed                              []keyedResult
}

func (*keyedScenario) name() string  { return "keyed" }
func (*keyedScenario) title() string { return "Keyed placement" }

func (k *keyedScenario) configure(s settings) error {
	k.keyedWorkers, k.keyedJobs, k.keyedRuns = s.workers, s.streamJobsFor(300, 500, 4000), s.seededRunsFor(1, 3, 3)
	return nil
}

func (k *keyedScenario) run(progress func(string)) {
	k.keyed = keyed(k.keyedWorkers, k.keyedJobs, k.keyedRuns, 0.8, func(what string) { progress("80% load, " + what) })
}

// keyedPlacements are the placements the keyed scenario compares, in its
// report's order.
var keyedPlacements = []string{"crew WithKey", "crew WithConsistentHash", "crew SmallestMailbox (ignores order)"}

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
	got := interleave(runs, keyedPlacements, progress, func(run int) func(i int) keyedResult {
		return keyedRun(workers, jobs, load, uint64(run))
	})
	out := make([]keyedResult, len(keyedPlacements))
	for i, name := range keyedPlacements {
		var breaches int64
		for _, x := range got[i] {
			breaches += x.orderBreaches
		}
		p50s := column(got[i], func(x keyedResult) float64 { return float64(x.p50) })
		p99s := column(got[i], func(x keyedResult) float64 { return float64(x.p99) })
		out[i] = keyedResult{name, time.Duration(medianKept(p50s)), time.Duration(medianKept(p99s)),
			time.Duration(medianOf(got[i], func(x keyedResult) float64 { return float64(x.makespan) })), breaches,
			medianOf(got[i], func(x keyedResult) float64 { return x.busiest }), p50s, p99s}
	}
	return out
}

// keyedRun draws one run of keyed with the seeds of run and returns the
// function that measures the i'th of keyedPlacements on it.
func keyedRun(workers, jobs int, load float64, run uint64) func(i int) keyedResult {
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
	opts := [][]crew.Option{{crew.WithKey(keyOf)}, {crew.WithConsistentHash(keyOf)}, nil}
	return func(pi int) keyedResult {
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
		}, opts[pi]...)
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
		return keyedResult{name: keyedPlacements[pi], p50: time.Duration(quantile(tis, 0.5)), p99: time.Duration(quantile(tis, 0.99)),
			makespan: makespan, orderBreaches: breaches.Load(), busiest: busiest}
	}
}

func (r *keyedScenario) markdown(p printer) {
	p("%d jobs with Zipf(s=1.1) keys over 10,000 keys, the same job mix, a Poisson stream at 80%% of the capacity of %d workers; time in system from the scheduled arrival; order breaches are jobs that ran beside or before an earlier job of their key (over all runs); busiest worker / mean is the most jobs one worker ran over the mean per worker (1.00 is an even share), from the pool's Stats after Wait. %s, each with its own seeds, the same for every placement within a run (WithConsistentHash draws its own hash seed too), the placements interleaved run by run; each figure is the median over the runs.\n\n", r.keyedJobs, r.keyedWorkers, upperFirst(plural(r.keyedRuns, "run")))
	p("| placement | p50 | p99 | makespan | order breaches | busiest worker / mean |\n|---|---|---|---|---|---|\n")
	for _, k := range r.keyed {
		p("| %s | %s | %s | %s | %d | %.2f |\n", k.name, ms(k.p50), ms(k.p99), ms(k.makespan), k.orderBreaches, k.busiest)
	}
	p("\n")
}

func (r *keyedScenario) targets() []target {
	if len(r.keyed) != 3 {
		return nil
	}
	k, ch := r.keyed[0], r.keyed[1]
	return []target{
		{"keyed placement (WithKey): p50 <= 0.1x consistent hashing's", fmt.Sprintf("%.2fx (WithKey %s vs WithConsistentHash %s)", ratio(k.p50, ch.p50), ms(k.p50), ms(ch.p50)), ratio(k.p50, ch.p50) <= 0.1},
		{"keyed placement (WithKey): p99 <= 0.25x consistent hashing's", fmt.Sprintf("%.2fx (WithKey %s vs WithConsistentHash %s)", ratio(k.p99, ch.p99), ms(k.p99), ms(ch.p99)), ratio(k.p99, ch.p99) <= 0.25},
		{"keyed placement (WithKey): 0 order breaches", fmt.Sprintf("%d breaches", k.orderBreaches), k.orderBreaches == 0},
	}
}

func (r *keyedScenario) advice() []adviceCheck {
	if len(r.keyed) != 3 {
		return nil
	}
	k, ch := r.keyed[0], r.keyed[1]
	return []adviceCheck{
		{"keyed", "keyed placement, p50: WithKey vs WithConsistentHash", inMsAll(k.p50s), inMsAll(ch.p50s), "ms"},
		{"keyed", "keyed placement, p99: WithKey vs WithConsistentHash", inMsAll(k.p99s), inMsAll(ch.p99s), "ms"},
	}
}

func (r *keyedScenario) charts() []chart {
	return chartIf(len(r.keyed) > 0, r.chartTitle(), "keyed.png", r.chart)
}

func (r *keyedScenario) chartTitle() string {
	return fmt.Sprintf("Keyed placement, Zipf keys at 80%% load, %d workers: time in system", r.keyedWorkers)
}

// chart draws each placement's p50 and p99 time in system.
func (r *keyedScenario) chart(file string) error {
	d := dotChart{title: r.chartTitle(), xLabel: "ms, log scale", log: true, label: msLabel, width: 10 * vg.Inch}
	p50, p99 := dotPanel{title: "p50"}, dotPanel{title: "p99"}
	for _, k := range r.keyed {
		d.names = append(d.names, k.name)
		p50.values = append(p50.values, float64(k.p50)/float64(time.Millisecond))
		p99.values = append(p99.values, float64(k.p99)/float64(time.Millisecond))
	}
	d.panels = []dotPanel{p50, p99}
	return d.save(file)
}
