package main

import (
	"flag"
	"fmt"
	"image/color"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// streamScenario submits uneven jobs as a Poisson stream at loads below the
// pool's capacity and measures each job's time in system.
type streamScenario struct {
	none
	streamJobs, streamWorkers, streamRuns int
	loadsFlag                             string
	loads                                 []float64
	stream                                []streamResult
}

func (*streamScenario) name() string  { return "stream" }
func (*streamScenario) title() string { return "Streaming, uneven jobs" }

func (s *streamScenario) flags(fs *flag.FlagSet) {
	fs.StringVar(&s.loadsFlag, "loads", "0.8,0.9", "comma-separated loads of the streaming scenario, as fractions of the pool's capacity (the targets read 0.8 and 0.9)")
}

func (s *streamScenario) configure(c settings) error {
	s.streamWorkers = c.workers
	s.streamJobs, s.streamRuns = c.streamJobsFor(300, 500, 4000), c.seededRunsFor(1, 3, 3)
	s.loads = nil
	for _, l := range strings.Split(s.loadsFlag, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(l), 64)
		if err != nil || x <= 0 || x >= 1 {
			return fmt.Errorf("-loads: %q is not a fraction between 0 and 1", l)
		}
		s.loads = append(s.loads, x)
	}
	return nil
}

func (s *streamScenario) run(progress func(string)) {
	for _, load := range s.loads {
		s.stream = append(s.stream, stream(queueing(), s.streamWorkers, s.streamJobs, s.streamRuns, load,
			func(what string) { progress(fmt.Sprintf("%.0f%% load, %s", load*100, what)) })...)
	}
}

func (r *streamScenario) markdown(p printer) {
	p("%d jobs per contender, load and run arriving as a Poisson stream at the loads below, as fractions of the capacity of %d workers for the jobs drawn, the same job mix; time in system from the scheduled arrival (a Submit that blocks counts) to the job's end. %s per load, each with its own seeds for the arrivals and the job times, the same for every contender within a run, the contenders one after another within each run; p50, p99 and p99.9 are each the median over the runs, and the last column shows how far p99 ranged over them.\n\n",
		r.streamJobs, r.streamWorkers, upperFirst(plural(r.streamRuns, "run")))
	p("| contender | load | p50 | p99 | p99.9 | p99 over the runs |\n|---|---|---|---|---|---|\n")
	for _, s := range r.stream {
		p("| %s | %.0f%% | %v | %v | %v | %v to %v |\n", s.name, s.load*100, ms(s.p50), ms(s.p99), ms(s.p999), ms(s.p99Min), ms(s.p99Max))
	}
	p("\n")
}

func (r *streamScenario) streamOf(name string, load float64) streamResult {
	return find(r.stream, func(s streamResult) bool { return s.name == name && s.load == load })
}

func (r *streamScenario) targets() []target {
	var ts []target
	streamVs := func(other, what string, limit float64) {
		for _, load := range []float64{0.8, 0.9} {
			s, o := r.streamOf(crewName, load), r.streamOf(other, load)
			if s.p99 > 0 && o.p99 > 0 {
				x := ratio(s.p99, o.p99)
				ts = append(ts, target{fmt.Sprintf("streaming %.0f%% load: p99 <= %gx %s", load*100, limit, what),
					fmt.Sprintf("%.2fx (crew %s vs %s %s)", x, ms(s.p99), other, ms(o.p99)), x <= limit})
			}
		}
	}
	streamVs(baselineName, "the shared queue's (hand-written shared chan)", 1.03)
	streamVs(shardsName, "the round-robin sharded pool's", 0.6)
	return ts
}

func (r *streamScenario) charts() []chart {
	return chartIf(len(r.stream) > 0, r.chartTitle(), "stream-p99.png", r.chart)
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
	type percentiles struct{ p50, p99, p999 float64 }
	got := interleave(runs, names(cs), progress, func(run int) func(i int) percentiles {
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
		return func(i int) percentiles {
			tis := timeInSystem(cs[i], workers, d, arrival)
			return percentiles{quantile(tis, 0.50), quantile(tis, 0.99), quantile(tis, 0.999)}
		}
	})
	out := make([]streamResult, len(cs))
	for i, c := range cs {
		p99 := column(got[i], func(x percentiles) float64 { return x.p99 })
		m := time.Duration(median(p99)) // sorts p99
		out[i] = streamResult{c.name, load,
			time.Duration(medianOf(got[i], func(x percentiles) float64 { return x.p50 })), m,
			time.Duration(medianOf(got[i], func(x percentiles) float64 { return x.p999 })),
			time.Duration(p99[0]), time.Duration(p99[len(p99)-1])}
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

func (r *streamScenario) chartTitle() string {
	return fmt.Sprintf("Streaming uneven jobs, %d workers: p99 time in system (median of %d runs)", r.streamWorkers, r.streamRuns)
}

// chart plots each contender's p99 time in system against the load,
// one line per contender, with the legend to the right of the plot. The
// contenders' points are spread a little sideways at each load so that
// equal figures do not hide one another.
func (r *streamScenario) chart(file string) error {
	p := plot.New()
	p.X.Label.Text = "load (% of capacity; each load's points spread sideways to stay apart)"
	p.Y.Label.Text = "p99 time in system (ms, log scale)"
	var loads []float64
	var names []string
	for _, s := range r.stream {
		if !slices.Contains(loads, s.load) {
			loads = append(loads, s.load)
		}
		if !slices.Contains(names, s.name) {
			names = append(names, s.name)
		}
	}
	ticks := make([]plot.Tick, len(loads))
	for i, l := range loads {
		ticks[i] = plot.Tick{Value: l * 100, Label: fmt.Sprintf("%.0f%%", l*100)}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	// A logarithmic time axis, so that a contender far behind does not
	// squash the rest together.
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{[]float64{1, 1.5, 2, 3, 5, 7}, 1}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 225}
	grid.Horizontal.Color = color.Gray{Y: 225}
	p.Add(grid)
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font.Size = vg.Points(10)
	legend.ThumbnailWidth = vg.Points(26)
	legend.Padding = vg.Points(3)
	// Room above and below the lines, so that the lowest and highest
	// points have a mark beside them.
	lo, hi := math.Inf(1), 0.0
	for _, s := range r.stream {
		lo, hi = min(lo, float64(s.p99)/float64(time.Millisecond)), max(hi, float64(s.p99)/float64(time.Millisecond))
	}
	p.Y.Min, p.Y.Max = lo/1.08, hi*1.08
	spread := 0.6 // load percentage points between neighbours
	for i, name := range names {
		dx := (float64(i) - float64(len(names)-1)/2) * spread
		var xys plotter.XYs
		for _, s := range r.stream {
			if s.name == name {
				xys = append(xys, plotter.XY{X: s.load*100 + dx, Y: float64(s.p99) / float64(time.Millisecond)})
			}
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		l := lookOf(name)
		line.LineStyle = draw.LineStyle{Color: l.color, Width: vg.Points(1.5)}
		points.GlyphStyle = l.glyph()
		p.Add(line, points)
		legend.Add(name, line, markerThumb{l})
	}
	w, h := 10*vg.Inch, 5*vg.Inch
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(144))
	dc := draw.New(img)
	body := titled(dc, r.chartTitle())
	lw := legend.Rectangle(body).Size().X + vg.Points(24)
	p.Draw(draw.Crop(body, vg.Points(6), -lw, vg.Points(4), 0))
	legend.Draw(draw.Crop(body, w-lw+vg.Points(12), 0, 0, -vg.Points(20)))
	return writePNG(file, img)
}
