package main

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// A chart is one PNG written next to report.md.
type chart struct{ title, file string }

// charts draws what the report has data for into dir.
func (r *report) charts(dir string) ([]chart, error) {
	var out []chart
	for _, ch := range []struct {
		has   bool
		draw  func() (*plot.Plot, error)
		file  string
		width vg.Length
	}{
		{len(r.stream) > 0, r.streamChart, "stream-p99.png", 7 * vg.Inch},
		{len(r.burst) > 0, r.burstChart, "burst-makespan.png", 8 * vg.Inch},
		{len(r.overhead) > 0, r.overheadChart, "overhead.png", 8 * vg.Inch},
	} {
		if !ch.has {
			continue
		}
		p, err := ch.draw()
		if err == nil {
			err = p.Save(ch.width, 4*vg.Inch, filepath.Join(dir, ch.file))
		}
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", ch.file, err)
		}
		out = append(out, chart{p.Title.Text, ch.file})
	}
	return out, nil
}

// streamChart plots each contender's p99 time in system against the load.
func (r *report) streamChart() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Streaming uneven jobs, %d workers: p99 time in system", r.streamWorkers)
	p.X.Label.Text = "load (% of capacity)"
	p.Y.Label.Text = "p99 time in system (ms)"
	p.Legend.Top, p.Legend.Left = true, true
	var lines []any
	for _, c := range contenders() {
		var xys plotter.XYs
		for _, s := range r.stream {
			if s.name == c.name {
				xys = append(xys, plotter.XY{X: s.load * 100, Y: float64(s.p99) / float64(time.Millisecond)})
			}
		}
		if len(xys) > 0 {
			lines = append(lines, c.name, xys)
		}
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return nil, err
	}
	return p, nil
}

// burstChart draws each contender's makespan over the lower bound.
func (r *report) burstChart() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Burst of %d uneven jobs, %d workers: makespan / lower bound", r.burstJobs, r.burstWorkers)
	p.Y.Label.Text = "makespan / max(sum/workers, longest job)"
	vals := make(plotter.Values, len(r.burst))
	names := make([]string, len(r.burst))
	for i, x := range r.burst {
		vals[i], names[i] = x.ratio, x.name
	}
	bars, err := plotter.NewBarChart(vals, vg.Points(28))
	if err != nil {
		return nil, err
	}
	bars.Color = color.RGBA{R: 70, G: 110, B: 170, A: 255}
	p.Add(bars)
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 8
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = -0.9, -0.5
	p.Y.Min = 0
	return p, nil
}

// overheadChart draws each contender's cost per no-op job, for one and for
// eight submitters, on a logarithmic axis.
func (r *report) overheadChart() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Overhead: ns per no-op job, %d workers (log scale)", r.overheadWorkers)
	p.Y.Label.Text = "ns per job"
	cs := contenders()
	names := make([]string, len(cs))
	w := vg.Points(16)
	lo, hi := math.Inf(1), 0.0
	for k, subs := range []int{1, 8} {
		vals := make(plotter.Values, len(cs))
		for i, c := range cs {
			names[i] = c.name
			vals[i] = r.overheadOf(c.name, subs).nsPerJob
			lo, hi = min(lo, vals[i]), max(hi, vals[i])
		}
		bars, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, err
		}
		bars.Color = plotutil.Color(k)
		bars.Offset = vg.Length(2*k-1) * w / 2
		p.Add(bars)
		p.Legend.Add(fmt.Sprintf("%d submitter(s)", subs), bars)
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.NominalX(names...)
	p.X.Tick.Label.Rotation = math.Pi / 8
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = -0.9, -0.5
	// Bars start at the axis' minimum: a log scale has no zero.
	p.Y.Min = math.Pow(10, math.Floor(math.Log10(lo)))
	p.Y.Max = math.Pow(10, math.Ceil(math.Log10(hi)))
	p.Y.Scale = floorLog{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	return p, nil
}

// floorLog is a logarithmic scale that draws values below the axis'
// minimum (the bars' base, 0) at the minimum.
type floorLog struct{}

func (floorLog) Normalize(lo, hi, x float64) float64 {
	return plot.LogScale{}.Normalize(lo, hi, max(x, lo))
}
