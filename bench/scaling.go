package main

import (
	"flag"
	"fmt"
	"runtime"
	"slices"

	"github.com/crewlib/crew"
	"gonum.org/v1/plot/vg"
)

// The scaling scenario: the overhead scenario's no-op jobs at several
// GOMAXPROCS, pool sizes and submitter counts, crew against the floor (a
// minimal single-lock pool), the hand-written pool over a channel as large
// as the pool, errgroup and conc.

// The grid of the scaling scenario.
var (
	scalingProcs      = []int{2, 8, 16}
	scalingWorkers    = []int{8, 64, 1024}
	scalingSubmitters = []int{1, 8}
)

// The scaling scenario's targets hold crew to scalingFloorLimit times the
// floor at every setting (what crew adds around its lock must stay small),
// to scalingChanLimit times the hand-written pool with 8 workers and one
// submitter, and want it scalingErrgroupSpeedup times as fast as errgroup
// with one submitter, 8 workers and GOMAXPROCS 2, and faster than conc at
// every setting.
const (
	scalingFloorLimit      = 1.3
	scalingChanLimit       = 1.2
	scalingErrgroupSpeedup = 4
)

// A scalingSetting is one cell of the scaling scenario's grid.
type scalingSetting struct {
	procs, workers, submitters int
}

// String names s as the report does: "GOMAXPROCS 2, 8 workers, 1 submitter".
func (s scalingSetting) String() string {
	return fmt.Sprintf("GOMAXPROCS %d, %d workers, %s", s.procs, s.workers, submitters(s.submitters))
}

// scalingSettings returns the grid, in the order it is measured and
// reported: by workers, then submitters, then GOMAXPROCS, so that the
// report's neighbouring rows differ in GOMAXPROCS only.
func scalingSettings() []scalingSetting {
	var ss []scalingSetting
	for _, w := range scalingWorkers {
		for _, subs := range scalingSubmitters {
			for _, procs := range scalingProcs {
				ss = append(ss, scalingSetting{procs, w, subs})
			}
		}
	}
	return ss
}

// scalingResult is one contender's cost per no-op job at one setting.
type scalingResult struct {
	scalingSetting
	name                 string
	nsPerJob, allocsPJob float64
}

// scalingContenders returns the contenders of the scaling scenario, in
// report order: crew's default pool, the floor, the hand-written pool over
// one channel of capacity workers, errgroup and conc.
func scalingContenders() []contender {
	names := []string{crewName, floorName, baselineName, errgroupName, concName}
	return slices.DeleteFunc(contenders(), func(c contender) bool { return !slices.Contains(names, c.name) })
}

// atProcs runs f with GOMAXPROCS set to procs, and sets it back to what it
// was once f returns or panics.
func atProcs(procs int, f func()) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	f()
}

// scalingScenario repeats the overhead scenario's no-op jobs over a grid
// of GOMAXPROCS, pool sizes and submitters.
type scalingScenario struct {
	none
	scalingJobs, scalingRuns int
	scaling                  []scalingResult
}

func (*scalingScenario) name() string  { return "scaling" }
func (*scalingScenario) title() string { return "Scaling: GOMAXPROCS, workers and submitters" }

func (s *scalingScenario) flags(fs *flag.FlagSet) {
	fs.IntVar(&s.scalingJobs, "scaling-jobs", 0, "no-op jobs per contender, setting and run in the scaling scenario (default 50000 with -quick, 150000, 1000000 with -full)")
}

func (s *scalingScenario) configure(c settings) error {
	if s.scalingJobs < 0 {
		return fmt.Errorf("-scaling-jobs must be at least 1 when given, not %d", s.scalingJobs)
	}
	if s.scalingJobs <= 0 {
		s.scalingJobs = pick(c.mode, 50_000, 150_000, 1_000_000)
	}
	s.scalingRuns = c.runsFor(3, 3, 5)
	return nil
}

func (s *scalingScenario) run(progress func(string)) {
	s.scaling = scaling(scalingSettings(), s.scalingJobs, s.scalingRuns, progress)
}

// scaling measures each setting as the overhead scenario does, jobs no-op
// jobs runs times with the contenders interleaved run by run, keeping the
// median of each, at the setting's GOMAXPROCS.
func scaling(settings []scalingSetting, jobs, runs int, progress func(string)) []scalingResult {
	cs := scalingContenders()
	var out []scalingResult
	for _, s := range settings {
		var res []overheadResult
		atProcs(s.procs, func() {
			res = overhead(cs, s.workers, s.submitters, jobs, runs, func(what string) { progress(s.String() + ": " + what) })
		})
		for _, o := range res {
			out = append(out, scalingResult{s, o.name, o.nsPerJob, o.allocsPJob})
		}
	}
	return out
}

// scalingOf returns name's result at s, or a zero one.
func (r *scalingScenario) scalingOf(name string, s scalingSetting) scalingResult {
	return find(r.scaling, func(x scalingResult) bool { return x.name == name && x.scalingSetting == s })
}

// scalingRun returns the settings r has figures for, in the order measured.
func (r *scalingScenario) scalingRun() []scalingSetting {
	var ss []scalingSetting
	for _, x := range r.scaling {
		if !slices.Contains(ss, x.scalingSetting) {
			ss = append(ss, x.scalingSetting)
		}
	}
	return ss
}

// markdown writes the scaling scenario's section with p: a summary
// of crew against the others per setting, then a table per setting.
func (r *scalingScenario) markdown(p printer) {
	p("The overhead scenario's no-op jobs, %d per contender, setting and run, at every setting of GOMAXPROCS %s (set by the program for the setting's runs and restored after; this machine has %d CPUs), %s workers and %s submitters. crew is crew's default pool, %s; the floor is a minimal pool around one lock (a ring of workers×%d waiting jobs, as many as crew's default pool holds, a stack of idle workers each parked on its own channel, a FIFO list of blocked Submits, crew's lock discipline); the hand-written pool's channel holds as many jobs as the pool has workers; errgroup has SetLimit(workers) and conc WithMaxGoroutines(workers). Start-up and wait included; the median of %d runs, contenders interleaved run by run; allocations from runtime.MemStats. First each setting's ratios, each a contender's time per job over the other's, then a table per setting.\n\n",
		r.scalingJobs, joinInts(scalingProcs), runtime.NumCPU(), joinInts(scalingWorkers), joinInts(scalingSubmitters),
		crewName, crew.DefaultQueueSize, r.scalingRuns)
	p("| setting | crew vs floor | crew vs hand-written (shared chan) | floor vs hand-written | errgroup vs crew | conc vs crew | crew allocs/job |\n|---|---|---|---|---|---|---|\n")
	for _, s := range r.scalingRun() {
		c, fl, base := r.scalingOf(crewName, s), r.scalingOf(floorName, s), r.scalingOf(baselineName, s)
		eg, cc := r.scalingOf(errgroupName, s), r.scalingOf(concName, s)
		p("| %s | %.2fx | %.2fx | %.2fx | %.2fx | %.2fx | %.3f |\n", s, c.nsPerJob/fl.nsPerJob, c.nsPerJob/base.nsPerJob,
			fl.nsPerJob/base.nsPerJob, eg.nsPerJob/c.nsPerJob, cc.nsPerJob/c.nsPerJob, c.allocsPJob)
	}
	p("\n")
	for _, s := range r.scalingRun() {
		p("### %s\n\n", s)
		p("| contender | ns/job | allocs/job | vs floor | vs hand-written (shared chan) |\n|---|---|---|---|---|\n")
		fl, base := r.scalingOf(floorName, s), r.scalingOf(baselineName, s)
		for _, x := range r.scaling {
			if x.scalingSetting == s {
				p("| %s | %.1f | %.3f | %.2fx | %.2fx |\n", x.name, x.nsPerJob, x.allocsPJob, x.nsPerJob/fl.nsPerJob, x.nsPerJob/base.nsPerJob)
			}
		}
		p("\n")
	}
}

// targets checks the scaling scenario's figures against crew's
// targets, for the settings r has figures for: crew against the floor at
// each setting, against the hand-written pool with 8 workers and one
// submitter, against errgroup with one submitter, 8 workers and GOMAXPROCS
// 2, against conc and its allocations at every setting (one row each, for
// the worst setting).
func (r *scalingScenario) targets() []target {
	var ts []target
	run := r.scalingRun()
	vs := func(s scalingSetting, other, what string, limit float64) {
		c, o := r.scalingOf(crewName, s), r.scalingOf(other, s)
		if c.nsPerJob > 0 && o.nsPerJob > 0 {
			x := c.nsPerJob / o.nsPerJob
			ts = append(ts, target{fmt.Sprintf("scaling, %s: <= %gx %s", s, limit, what),
				fmt.Sprintf("%.2fx (crew %.0f vs %s %.0f ns/job)", x, c.nsPerJob, other, o.nsPerJob), x <= limit})
		}
	}
	for _, s := range run {
		vs(s, floorName, "the floor (single-lock pool)", scalingFloorLimit)
	}
	for _, s := range run {
		if s.workers == 8 && s.submitters == 1 {
			vs(s, baselineName, "the hand-written pool (shared chan, capacity = workers)", scalingChanLimit)
		}
	}
	for _, s := range run {
		c, eg := r.scalingOf(crewName, s), r.scalingOf(errgroupName, s)
		if s.workers == 8 && s.submitters == 1 && s.procs == 2 && c.nsPerJob > 0 && eg.nsPerJob > 0 {
			x := eg.nsPerJob / c.nsPerJob
			ts = append(ts, target{fmt.Sprintf("scaling, %s: >= %dx faster than errgroup", s, scalingErrgroupSpeedup),
				fmt.Sprintf("%.2fx faster (crew %.0f vs errgroup %.0f ns/job)", x, c.nsPerJob, eg.nsPerJob), x >= scalingErrgroupSpeedup})
		}
	}
	// One row for conc: the setting where crew comes closest to it, or
	// passes it.
	var closest scalingSetting
	worst := 0.0
	for _, s := range run {
		if c, cc := r.scalingOf(crewName, s), r.scalingOf(concName, s); c.nsPerJob > 0 && cc.nsPerJob > 0 && c.nsPerJob/cc.nsPerJob > worst {
			closest, worst = s, c.nsPerJob/cc.nsPerJob
		}
	}
	if worst > 0 {
		c, cc := r.scalingOf(crewName, closest), r.scalingOf(concName, closest)
		ts = append(ts, target{"scaling, every setting: faster than conc",
			fmt.Sprintf("%.2fx conc's time at most (%s: crew %.0f vs conc %.0f ns/job)", worst, closest, c.nsPerJob, cc.nsPerJob), worst < 1})
	}
	// One row for the allocations: the most at any setting, and where.
	var most scalingResult
	for _, s := range run {
		if c := r.scalingOf(crewName, s); c.nsPerJob > 0 && (most.name == "" || c.allocsPJob > most.allocsPJob) {
			most = c
		}
	}
	if most.name != "" {
		ts = append(ts, target{"scaling, every setting: 0 allocs/job",
			fmt.Sprintf("%.3f allocs/job at most (%s)", most.allocsPJob, most.scalingSetting), most.allocsPJob < 0.01})
	}
	return ts
}

func (r *scalingScenario) charts() []chart {
	return chartIf(len(r.scaling) > 0, r.chartTitle(), "scaling.png", r.chart)
}

// chartTitle is the scaling chart's title and its caption in the report.
func (r *scalingScenario) chartTitle() string {
	return "Scaling: time per no-op job over the hand-written pool's (shared chan, capacity = workers)"
}

// chart draws, for each setting, each contender's time per no-op job
// over the hand-written pool's: a row per setting, a panel per contender.
func (r *scalingScenario) chart(file string) error {
	d := dotChart{title: r.chartTitle(), xLabel: "x hand-written (shared chan, capacity = workers), log scale", ref: 1, log: true,
		label: ratioLabel, width: 12 * vg.Inch}
	settings := r.scalingRun()
	for _, s := range settings {
		d.names = append(d.names, s.String())
	}
	for _, c := range scalingContenders() {
		if c.name == baselineName {
			continue
		}
		panel := dotPanel{title: c.name, look: c.name}
		for _, s := range settings {
			panel.values = append(panel.values, r.scalingOf(c.name, s).nsPerJob/r.scalingOf(baselineName, s).nsPerJob)
		}
		d.panels = append(d.panels, panel)
	}
	return d.save(file)
}
