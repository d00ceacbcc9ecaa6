package main

import (
	"flag"
	"fmt"
	"slices"
	"time"
)

// A scenario is one part of the benchmark: it owns its settings and its
// results, measures, and writes its section of the report, the targets it
// checks, the figures it gives the README's advice and its charts. Adding
// one takes its own files and a line in scenarios.
type scenario interface {
	// name is the scenario's name in -scenarios.
	name() string
	// title is its section's heading in the report.
	title() string
	// flags registers the scenario's own flags on fs. A flag left at 0
	// takes the mode's value.
	flags(fs *flag.FlagSet)
	// configure sizes the scenario for the run, once the flags are parsed,
	// or says which of its flags is wrong.
	configure(s settings) error
	// run measures, saying what it is at through progress.
	run(progress func(string))
	// markdown writes the scenario's section, below its heading, with p.
	markdown(p printer)
	// targets checks the scenario's figures against crew's targets.
	targets() []target
	// advice returns the scenario's figures for the README's advice.
	advice() []adviceCheck
	// charts returns the charts the scenario has figures for.
	charts() []chart
}

// scenarios returns every scenario, new, in the order they run and the
// report lists them.
func scenarios() []scenario {
	return []scenario{
		&overheadScenario{},
		&burstScenario{},
		&streamScenario{},
		&keyedScenario{},
		&mailboxesScenario{},
		&actorsScenario{},
		&memoryScenario{},
		&batchesScenario{},
		&scalingScenario{},
		&tenantsScenario{},
		&orderedScenario{},
		&adaptiveScenario{},
	}
}

// A printer writes formatted text into the report.
type printer func(format string, a ...any)

// A chart is one PNG written next to report.md: draw writes it to the
// path it is given.
type chart struct {
	title, file string
	draw        func(path string) error
}

// chartIf returns the one chart of a scenario, if it has the figures for
// it.
func chartIf(has bool, title, file string, draw func(path string) error) []chart {
	if !has {
		return nil
	}
	return []chart{{title, file, draw}}
}

// A target is one of crew's performance targets, checked against a run.
type target struct {
	what, measured string
	met            bool
}

// none gives a scenario the methods it has nothing for: no flags of its
// own, no advice, no charts.
type none struct{}

func (none) flags(*flag.FlagSet)   {}
func (none) advice() []adviceCheck { return nil }
func (none) charts() []chart       { return nil }

// A mode is how long a run takes, and so how many jobs and runs each
// figure rests on.
type mode int

const (
	quick    mode = iota // a smoke run: figures not for judging
	standard             // the default run: about five minutes on two cores
	full                 // the committed reference run: about twenty-eight minutes
)

func (m mode) String() string {
	return [...]string{"-quick", "default", "-full"}[m]
}

// about says how long a run of the mode takes on two cores, and what
// its figures are good for.
func (m mode) about() string {
	return [...]string{
		"a smoke run of one to two minutes: too few jobs and runs to judge a target or the advice",
		"the default run, about five minutes on two cores: enough runs to judge the advice, fewer jobs per run than -full",
		"the reference run, about twenty-eight minutes on two cores: the figures the README quotes",
	}[m]
}

// pick returns the mode's value of a setting.
func pick[T any](m mode, quick, standard, full T) T {
	return [...]T{quick, standard, full}[m]
}

// settings are what every scenario is sized from: the mode and the
// flags that more than one scenario reads.
type settings struct {
	mode    mode
	workers int // workers per pool, -workers
	// runs is -runs: the runs of the scenarios that time one figure per
	// contender, each the median; 0 takes each scenario's mode value.
	runs int
	// streamJobs and seededRuns are -stream-jobs and -stream-runs: jobs
	// per run of the streaming and keyed scenarios, and the seeded runs
	// of those and of the batches scenario; 0 takes the mode's.
	streamJobs, seededRuns int
	// benchtime is how long each testing.Benchmark measurement runs.
	benchtime time.Duration
}

// runsFor returns -runs if it was given, else the mode's value.
func (s settings) runsFor(quick, standard, full int) int {
	if s.runs > 0 {
		return s.runs
	}
	return pick(s.mode, quick, standard, full)
}

// seededRunsFor returns -stream-runs if it was given, else the mode's value.
func (s settings) seededRunsFor(quick, standard, full int) int {
	if s.seededRuns > 0 {
		return s.seededRuns
	}
	return pick(s.mode, quick, standard, full)
}

// streamJobsFor returns -stream-jobs if it was given, else the mode's value.
func (s settings) streamJobsFor(quick, standard, full int) int {
	if s.streamJobs > 0 {
		return s.streamJobs
	}
	return pick(s.mode, quick, standard, full)
}

// interleave measures each of names runs times, every one of them once per
// run, in turn, so that the machine's drift hits all of them alike. For
// each run it calls prepare(run), which draws the run's inputs (the same
// for every contender) and returns the function that measures the i'th
// contender on them. It returns what was measured, by contender, then
// run.
func interleave[R any](runs int, names []string, progress func(string), prepare func(run int) func(i int) R) [][]R {
	got := make([][]R, len(names))
	for run := range runs {
		measure := prepare(run)
		for i, name := range names {
			progress(fmt.Sprintf("run %d/%d: %s", run+1, runs, name))
			got[i] = append(got[i], measure(i))
		}
	}
	return got
}

// each is interleave's prepare for measurements with no per-run inputs.
func each[R any](measure func(i int) R) func(int) func(int) R {
	return func(int) func(int) R { return measure }
}

// column returns f of each of xs.
func column[X any](xs []X, f func(X) float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// medianOf returns the median of f over xs, leaving xs as they are.
func medianOf[X any](xs []X, f func(X) float64) float64 {
	return median(column(xs, f))
}

// medianKept returns the median of xs, leaving them in their order (the
// advice pairs runs by index), where median sorts them.
func medianKept(xs []float64) float64 { return median(slices.Clone(xs)) }
