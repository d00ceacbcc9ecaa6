package main

import (
	"flag"
	"fmt"
	"time"

	"gonum.org/v1/plot/vg"
)

// burstScenario submits a burst of uneven jobs at once and times how long
// each contender takes to run them all.
type burstScenario struct {
	none
	burstJobs, burstWorkers, runs int
	burst                         []burstResult
	burstBound                    time.Duration
}

// burstResult is one contender's makespan for a burst of uneven jobs.
type burstResult struct {
	name     string
	makespan time.Duration
	ratio    float64 // to the lower bound
}

func (*burstScenario) name() string  { return "burst" }
func (*burstScenario) title() string { return "Burst fan-out, uneven jobs" }

func (b *burstScenario) flags(fs *flag.FlagSet) {
	fs.IntVar(&b.burstWorkers, "burst-workers", 16, "workers per pool in the burst scenario")
}

func (b *burstScenario) configure(s settings) error {
	if b.burstWorkers < 1 {
		return fmt.Errorf("-burst-workers must be at least 1, not %d", b.burstWorkers)
	}
	b.runs = s.runsFor(3, 3, 5)
	b.burstJobs = pick(s.mode, 400, 1000, 2000)
	return nil
}

func (b *burstScenario) run(progress func(string)) {
	b.burst, b.burstBound = burst(queueing(), b.burstWorkers, b.burstJobs, b.runs, progress)
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
	spans := interleave(runs, names(cs), progress, each(func(i int) float64 {
		start := time.Now()
		r := cs[i].start(workers)
		for _, x := range d {
			r.submit(func() { time.Sleep(x) })
		}
		r.wait()
		return float64(time.Since(start))
	}))
	out := make([]burstResult, len(cs))
	for i, c := range cs {
		m := time.Duration(median(spans[i]))
		out[i] = burstResult{c.name, m, float64(m) / float64(bound)}
	}
	return out, bound
}

func (r *burstScenario) burstOf(name string) burstResult {
	return find(r.burst, func(x burstResult) bool { return x.name == name })
}

func (r *burstScenario) markdown(p printer) {
	p("%d jobs submitted at once from one goroutine, 95%% sleeping 2 ms and 5%% 100 ms (seeded, the same for every contender), %d workers; the median makespan of %s, contenders interleaved run by run. Lower bound max(sum/workers, longest job) = %v. %s and %s are left out here and in the streaming scenario: they are the same FIFO queues as %s and %s.\n\n",
		r.burstJobs, r.burstWorkers, plural(r.runs, "run"), r.burstBound.Round(time.Millisecond), chan1024Name, crew1024Name, baselineName, crewName)
	p("| contender | makespan | vs lower bound | vs hand-written (shared chan) |\n|---|---|---|---|\n")
	base := r.burstOf(baselineName)
	for _, x := range r.burst {
		p("| %s | %v | %.3fx | %.3fx |\n", x.name, x.makespan.Round(time.Millisecond), x.ratio, float64(x.makespan)/float64(base.makespan))
	}
	p("\n")
}

func (r *burstScenario) targets() []target {
	c, base := r.burstOf(crewName), r.burstOf(baselineName)
	if c.makespan <= 0 || base.makespan <= 0 {
		return nil
	}
	x := ratio(c.makespan, base.makespan)
	return []target{{"burst makespan: <= 1.02x the shared queue's (hand-written shared chan)",
		fmt.Sprintf("%.3fx (crew %s vs %s %s)", x, ms(c.makespan), baselineName, ms(base.makespan)), x <= 1.02}}
}

func (r *burstScenario) charts() []chart {
	return chartIf(len(r.burst) > 0, r.chartTitle(), "burst-makespan.png", r.chart)
}

func (r *burstScenario) chartTitle() string {
	return fmt.Sprintf("Burst of %d uneven jobs, %d workers: makespan over the lower bound", r.burstJobs, r.burstWorkers)
}

// chart draws each contender's makespan over the lower bound.
func (r *burstScenario) chart(file string) error {
	d := dotChart{title: r.chartTitle(), xLabel: "makespan / max(sum/workers, longest job)", ref: 1,
		label: func(v float64) string { return fmt.Sprintf("%.3fx", v) }, width: 8 * vg.Inch}
	var panel dotPanel
	for _, x := range r.burst {
		d.names = append(d.names, x.name)
		panel.values = append(panel.values, x.ratio)
	}
	d.panels = []dotPanel{panel}
	return d.save(file)
}
