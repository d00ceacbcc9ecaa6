package main

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"gonum.org/v1/plot/vg"
)

// overheadScenario times no-op jobs through every contender, from one
// submitter and from eight.
type overheadScenario struct {
	none
	overheadJobs, overheadWorkers, runs int
	overhead                            []overheadResult
}

// overheadResult is one contender's cost per no-op job.
type overheadResult struct {
	name                 string
	submitters           int
	nsPerJob, allocsPJob float64
}

func (*overheadScenario) name() string  { return "overhead" }
func (*overheadScenario) title() string { return "Overhead: no-op jobs" }

func (o *overheadScenario) configure(s settings) error {
	o.overheadWorkers, o.runs = s.workers, s.runsFor(3, 5, 5)
	o.overheadJobs = pick(s.mode, 100_000, 300_000, 1_000_000)
	return nil
}

func (o *overheadScenario) run(progress func(string)) {
	for _, subs := range []int{1, 8} {
		o.overhead = append(o.overhead, overhead(contenders(), o.overheadWorkers, subs, o.overheadJobs, o.runs,
			func(what string) { progress(submitters(subs) + ", " + what) })...)
	}
}

func noop() {}

// overhead runs jobs no-op jobs through each contender with workers
// workers, from submitters goroutines, runs times, interleaving the
// contenders run by run so that the machine's drift hits all of them
// alike, and keeps the median run of each.
func overhead(cs []contender, workers, submitters, jobs, runs int, progress func(string)) []overheadResult {
	type cost struct{ ns, allocs float64 }
	got := interleave(runs, names(cs), progress, each(func(i int) cost {
		var before, after runtime.MemStats
		runtime.GC()
		start := time.Now()
		r := cs[i].start(workers)
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
		return cost{float64(elapsed.Nanoseconds()) / float64(jobs), float64(after.Mallocs-before.Mallocs) / float64(jobs)}
	}))
	out := make([]overheadResult, len(cs))
	for i, c := range cs {
		out[i] = overheadResult{c.name, submitters,
			medianOf(got[i], func(x cost) float64 { return x.ns }), medianOf(got[i], func(x cost) float64 { return x.allocs })}
	}
	return out
}

func (r *overheadScenario) markdown(p printer) {
	p("%d no-op jobs through %d workers, from one submitter and from eight; start-up and wait included; median of %s (contenders interleaved run by run). Allocations from runtime.MemStats. The floor is the least a pool with crew's guarantees costs around one lock (see the scaling scenario).\n\n", r.overheadJobs, r.overheadWorkers, plural(r.runs, "run"))
	p("| contender | submitters | ns/job | allocs/job | vs floor | vs hand-written (shared chan) |\n|---|---|---|---|---|---|\n")
	for _, o := range r.overhead {
		fl, base := r.overheadOf(floorName, o.submitters), r.overheadOf(baselineName, o.submitters)
		p("| %s | %d | %.1f | %.2f | %.2fx | %.2fx |\n", o.name, o.submitters, o.nsPerJob, o.allocsPJob, o.nsPerJob/fl.nsPerJob, o.nsPerJob/base.nsPerJob)
	}
	p("\n")
}

func (r *overheadScenario) overheadOf(name string, subs int) overheadResult {
	return find(r.overhead, func(o overheadResult) bool { return o.name == name && o.submitters == subs })
}

// targets checks the overhead figures against crew's targets, in the order
// they are listed.
func (r *overheadScenario) targets() []target {
	var ts []target
	add := func(what, measured string, met bool) { ts = append(ts, target{what, measured, met}) }
	// ns returns a row's "1.05x (crew 105 vs name 100 ns/job)".
	ns := func(x, y overheadResult) string {
		return fmt.Sprintf("%.2fx (crew %.0f vs %s %.0f ns/job)", x.nsPerJob/y.nsPerJob, x.nsPerJob, y.name, y.nsPerJob)
	}
	overheadVs := func(subs int, other, what string) {
		c, o := r.overheadOf(crewName, subs), r.overheadOf(other, subs)
		if c.nsPerJob > 0 && o.nsPerJob > 0 {
			add(fmt.Sprintf("overhead, %s: <= 1.2x %s", submitters(subs), what), ns(c, o), c.nsPerJob/o.nsPerJob <= 1.2)
		}
	}
	for _, subs := range []int{1, 8} {
		c, fl := r.overheadOf(crewName, subs), r.overheadOf(floorName, subs)
		if c.nsPerJob > 0 && fl.nsPerJob > 0 {
			add(fmt.Sprintf("overhead, %s: <= %gx the floor (single-lock pool)", submitters(subs), scalingFloorLimit), ns(c, fl), c.nsPerJob/fl.nsPerJob <= scalingFloorLimit)
		}
	}
	overheadVs(1, baselineName, "the hand-written pool (shared chan, capacity = workers)")
	overheadVs(8, baselineName, "the hand-written pool (shared chan)")
	overheadVs(1, chan1024Name, "the hand-written pool over a channel of 1024")
	if c, o := r.overheadOf(crew1024Name, 1), r.overheadOf(chan1024Name, 1); c.nsPerJob > 0 && o.nsPerJob > 0 {
		add("overhead, 1 submitter, the same bound: crew with room for 1024 jobs <= 1.2x the hand-written pool over a channel of 1024",
			fmt.Sprintf("%.2fx (crew %.0f vs %s %.0f ns/job)", c.nsPerJob/o.nsPerJob, c.nsPerJob, o.name, o.nsPerJob), c.nsPerJob/o.nsPerJob <= 1.2)
	}
	for _, subs := range []int{1, 8} {
		c, eg := r.overheadOf(crewName, subs), r.overheadOf(errgroupName, subs)
		if c.nsPerJob > 0 && eg.nsPerJob > 0 {
			x := eg.nsPerJob / c.nsPerJob
			add(fmt.Sprintf("overhead, %s: >= 4x faster than errgroup", submitters(subs)),
				fmt.Sprintf("%.2fx faster (crew %.0f vs errgroup %.0f ns/job)", x, c.nsPerJob, eg.nsPerJob), x >= 4)
		}
	}
	for _, subs := range []int{1, 8} {
		if c := r.overheadOf(crewName, subs); c.nsPerJob > 0 {
			add(fmt.Sprintf("overhead, %s: 0 allocs/job", submitters(subs)), fmt.Sprintf("%.2f allocs/job", c.allocsPJob), c.allocsPJob < 0.01)
		}
	}
	for _, subs := range []int{1, 8} {
		b, c := r.overheadOf(crewBatchName, subs), r.overheadOf(crewName, subs)
		if b.nsPerJob > 0 && c.nsPerJob > 0 {
			x := b.nsPerJob / c.nsPerJob
			add(fmt.Sprintf("overhead, %s: a batch's Submit <= 1.1x the pool's, 0 allocs/job", submitters(subs)),
				fmt.Sprintf("%.2fx (batch %.0f vs pool %.0f ns/job), %.2f allocs/job", x, b.nsPerJob, c.nsPerJob, b.allocsPJob), x <= 1.1 && b.allocsPJob < 0.01)
		}
	}
	return ts
}

func (r *overheadScenario) charts() []chart {
	return chartIf(len(r.overhead) > 0, r.chartTitle(), "overhead.png", r.chart)
}

func (r *overheadScenario) chartTitle() string {
	return fmt.Sprintf("Overhead: time per no-op job over the hand-written pool's (shared chan), %d workers", r.overheadWorkers)
}

// chart draws each contender's time per no-op job over the baseline's, for
// one submitter and for eight, on a logarithmic axis.
func (r *overheadScenario) chart(file string) error {
	d := dotChart{title: r.chartTitle(), xLabel: "x hand-written (shared chan), log scale", ref: 1, log: true,
		label: ratioLabel, width: 10 * vg.Inch}
	d.names = names(contenders())
	for _, subs := range []int{1, 8} {
		d.panels = append(d.panels, ratioPanel(submitters(subs), d.names, baselineName,
			func(name string) float64 { return r.overheadOf(name, subs).nsPerJob }))
	}
	return d.save(file)
}
