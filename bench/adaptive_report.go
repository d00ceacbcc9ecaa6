package main

import (
	"fmt"
	"image/color"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

func (a *adaptiveScenario) markdown(p printer) {
	p("One pool per contender calls a simulated downstream on the real clock: a call sleeps %v while at most the downstream's capacity are in flight as it starts, and in proportion to them above it, times lognormal noise (σ 0.2). The capacity is %d for the first third of each %v run, %d for the second and %d again for the last; %d submitters call in a closed loop, so demand always exceeds it. Every contender starts at 1 worker, and may go up to %d. The fixed sizes are too small, the optimum of the first third and too large; Gradient2, AIMD and Vegas are Netflix concurrency-limits' rules, ported to Go in bench/limiters.go with their published defaults, each driving a crew pool through Resize on every job's run time, the jobs in flight and its failure. Calls per second and p99 are those of the steady state, the second half of each third; the distance to the capacity is over the whole run. Figures are the median of %s, contenders interleaved.\n\n",
		adaptiveBase, a.capacity, a.span, 2*a.capacity, a.capacity, 6*a.capacity, adaptiveMax, plural(a.runs, "run"))
	p("| contender | off by: mean \\|size − capacity\\| / capacity | first within ±15%% | calls/s (steady) | vs the best fixed size | p99 run time (steady) | vs no-load p99 |\n|---|---|---|---|---|---|---|\n")
	best, noLoad := a.bestFixed(), a.noLoadP99()
	for _, r := range a.results {
		reach := "never"
		if r.reach >= 0 {
			reach = fmt.Sprintf("%v (%d base latencies)", r.reach.Round(time.Millisecond), r.reach/adaptiveBase)
		}
		p("| %s | %.3f | %s | %.0f | %.3fx | %s | %.2fx |\n", r.name, r.offBy, reach, r.thr, r.thr/best, ms(r.p99), ratio(r.p99, noLoad))
	}
	p("\nThe no-load p99 is the p99 of the calls made with at most the capacity in flight, over every contender's runs: %s.", ms(noLoad))
	for _, l := range []limiter{newGradient2(1, 1, adaptiveMax), newAIMD(1, 1, adaptiveMax), newVegas(1, 1, adaptiveMax)} {
		p(" %s: %s.", l.name(), l.params())
	}
	p("\n\n")
}

// bestFixed returns the calls per second of the best fixed size.
func (a *adaptiveScenario) bestFixed() float64 {
	best := 0.0
	for _, r := range a.results {
		if strings.HasPrefix(r.name, "fixed ") {
			best = max(best, r.thr)
		}
	}
	return best
}

// noLoadP99 returns the lowest no-load p99 of the contenders', which all
// made calls at no load.
func (a *adaptiveScenario) noLoadP99() time.Duration {
	var lo time.Duration
	for _, r := range a.results {
		if r.noLoadP99 > 0 && (lo == 0 || r.noLoadP99 < lo) {
			lo = r.noLoadP99
		}
	}
	return lo
}

func (a *adaptiveScenario) targets() []target {
	c := a.resultOf(adaptiveCrewName)
	if c.name == "" {
		return nil
	}
	best, noLoad := a.bestFixed(), a.noLoadP99()
	reach := "never"
	if c.reach >= 0 {
		reach = fmt.Sprintf("%d base latencies", c.reach/adaptiveBase)
	}
	ts := []target{
		{"adaptive: within ±15% of the capacity within 100 base latencies of the start", reach, c.reach >= 0 && c.reach <= 100*adaptiveBase},
		{"adaptive: throughput >= 0.95x the best fixed size's", fmt.Sprintf("%.3fx (%.0f vs %.0f calls/s)", c.thr/best, c.thr, best), c.thr >= 0.95*best},
		{"adaptive: p99 run time <= 1.3x the no-load p99", fmt.Sprintf("%.2fx (%s vs %s)", ratio(c.p99, noLoad), ms(c.p99), ms(noLoad)), ratio(c.p99, noLoad) <= 1.3},
	}
	for _, name := range []string{"Gradient2", "AIMD", "Vegas"} {
		o := a.resultOf(name)
		ts = append(ts, target{"adaptive: closer to the capacity than " + name + " (mean |size − capacity|), with no worse p99",
			fmt.Sprintf("off by %.3f vs %.3f, p99 %s vs %s", c.offBy, o.offBy, ms(c.p99), ms(o.p99)), c.offBy < o.offBy && c.p99 <= o.p99})
	}
	return ts
}

func (a *adaptiveScenario) charts() []chart {
	return chartIf(len(a.results) > 0, a.chartTitle(), "adaptive.png", a.chart)
}

func (a *adaptiveScenario) chartTitle() string {
	return fmt.Sprintf("Pool size and p99 run time over time, against a downstream of capacity %d, then %d, then %d", a.capacity, 2*a.capacity, a.capacity)
}

// adaptiveColors tells the contenders apart in the chart.
var adaptiveColors = []uint32{0xbdbdbd, 0x7f7f7f, 0x404040, 0x1f77b4, 0xd62728, 0x2ca02c, 0xff7f0e}

// chart draws each contender's size over its last run, with the
// capacity, and its p99 run time per 100 ms.
func (a *adaptiveScenario) chart(file string) error {
	sizes, p99s := plot.New(), plot.New()
	sizes.Title.Text, p99s.Title.Text = fmt.Sprintf("workers (dashed: the capacity; cut at %d)", 6*a.capacity), "p99 run time per 100 ms (ms)"
	sizes.X.Label.Text, p99s.X.Label.Text = "seconds", "seconds"
	legend := plot.NewLegend()
	for i, r := range a.results {
		var xs, ys plotter.XYs
		for k, n := range r.sizes {
			xs = append(xs, plotter.XY{X: float64(k+1) * adaptiveTick.Seconds(), Y: float64(n)})
		}
		for k, v := range r.p99s {
			if v == v { // not NaN: the bucket had calls
				ys = append(ys, plotter.XY{X: (float64(k) + 0.5) * 10 * adaptiveTick.Seconds(), Y: v})
			}
		}
		c := rgb(adaptiveColors[i%len(adaptiveColors)])
		for _, pl := range []struct {
			p   *plot.Plot
			xys plotter.XYs
		}{{sizes, xs}, {p99s, ys}} {
			l, err := plotter.NewLine(pl.xys)
			if err != nil {
				return err
			}
			l.LineStyle.Color, l.LineStyle.Width = c, vg.Points(1.5)
			pl.p.Add(l)
			if pl.p == sizes {
				legend.Add(r.name, l)
			}
		}
	}
	var want plotter.XYs
	for at := time.Duration(0); at < a.span; at += adaptiveTick {
		want = append(want, plotter.XY{X: (at + adaptiveTick).Seconds(), Y: float64(a.capacityAt(at))})
	}
	l, err := plotter.NewLine(want)
	if err != nil {
		return err
	}
	l.LineStyle = draw.LineStyle{Color: color.Black, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	sizes.Add(l)
	sizes.Y.Min, sizes.Y.Max, p99s.Y.Min = 0, float64(6*a.capacity), 0 // a limiter that runs away leaves the top
	return saveTiled(file, a.chartTitle(), "time since the run began", 12*vg.Inch, 5*vg.Inch, []*plot.Plot{sizes, p99s}, 2, &legend)
}
