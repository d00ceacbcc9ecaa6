package main

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// A chart is one PNG written next to report.md.
type chart struct{ title, file string }

// charts draws what the report has data for into dir.
func (r *report) charts(dir string) ([]chart, error) {
	var out []chart
	for _, ch := range []struct {
		has   bool
		title string
		file  string
		draw  func(file string) error
	}{
		{len(r.overhead) > 0, r.overheadTitle(), "overhead.png", r.overheadChart},
		{len(r.burst) > 0, r.burstTitle(), "burst-makespan.png", r.burstChart},
		{len(r.stream) > 0, r.streamTitle(), "stream-p99.png", r.streamChart},
		{len(r.keyed) > 0, r.keyedTitle(), "keyed.png", r.keyedChart},
		{len(r.mailboxes) > 0, r.mailboxTitle(), "mailboxes.png", r.mailboxChart},
		{len(r.scaling) > 0, r.scalingTitle(), "scaling.png", r.scalingChart},
		{len(r.tenants) > 0, r.tenantsTitle(), "tenants-p99.png", r.tenantsChart},
		{r.ordered != nil, r.orderedTitle(), "ordered.png", r.orderedChart},
	} {
		if !ch.has {
			continue
		}
		if err := ch.draw(filepath.Join(dir, ch.file)); err != nil {
			return nil, fmt.Errorf("chart %s: %w", ch.file, err)
		}
		out = append(out, chart{ch.title, ch.file})
	}
	return out, nil
}

func ratioLabel(v float64) string { return fmt.Sprintf("%.2fx", v) }

func msLabel(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.1f ms", v)
}

func (r *report) overheadTitle() string {
	return fmt.Sprintf("Overhead: time per no-op job over the hand-written pool's (shared chan), %d workers", r.overheadWorkers)
}

// overheadChart draws each contender's time per no-op job over the
// baseline's, for one submitter and for eight, on a logarithmic axis.
func (r *report) overheadChart(file string) error {
	d := dotChart{title: r.overheadTitle(), xLabel: "x hand-written (shared chan), log scale", ref: 1, log: true,
		label: ratioLabel, width: 10 * vg.Inch}
	for _, c := range contenders() {
		d.names = append(d.names, c.name)
	}
	for _, subs := range []int{1, 8} {
		d.panels = append(d.panels, ratioPanel(submitters(subs), d.names, baselineName,
			func(name string) float64 { return r.overheadOf(name, subs).nsPerJob }))
	}
	return d.save(file)
}

func (r *report) burstTitle() string {
	return fmt.Sprintf("Burst of %d uneven jobs, %d workers: makespan over the lower bound", r.burstJobs, r.burstWorkers)
}

// burstChart draws each contender's makespan over the lower bound.
func (r *report) burstChart(file string) error {
	d := dotChart{title: r.burstTitle(), xLabel: "makespan / max(sum/workers, longest job)", ref: 1,
		label: func(v float64) string { return fmt.Sprintf("%.3fx", v) }, width: 8 * vg.Inch}
	var panel dotPanel
	for _, x := range r.burst {
		d.names = append(d.names, x.name)
		panel.values = append(panel.values, x.ratio)
	}
	d.panels = []dotPanel{panel}
	return d.save(file)
}

func (r *report) keyedTitle() string {
	return fmt.Sprintf("Keyed placement, Zipf keys at 80%% load, %d workers: time in system", r.keyedWorkers)
}

// keyedChart draws each placement's p50 and p99 time in system.
func (r *report) keyedChart(file string) error {
	d := dotChart{title: r.keyedTitle(), xLabel: "ms, log scale", log: true, label: msLabel, width: 10 * vg.Inch}
	p50, p99 := dotPanel{title: "p50"}, dotPanel{title: "p99"}
	for _, k := range r.keyed {
		d.names = append(d.names, k.name)
		p50.values = append(p50.values, float64(k.p50)/float64(time.Millisecond))
		p99.values = append(p99.values, float64(k.p99)/float64(time.Millisecond))
	}
	d.panels = []dotPanel{p50, p99}
	return d.save(file)
}

func (r *report) mailboxTitle() string {
	return "Mailboxes: time per message over a buffered channel's (1024), one consumer"
}

// mailboxChart draws each mailbox's time per message over the buffered
// channel's, a panel per count of producers, alone and with load.
func (r *report) mailboxChart(file string) error {
	d := dotChart{title: r.mailboxTitle(), xLabel: "x buffered chan (1024), log scale", ref: 1, log: true,
		label: ratioLabel, width: 10 * vg.Inch}
	type setting struct {
		producers int
		loaded    bool
	}
	var settings []setting
	for _, m := range r.mailboxes {
		if !slices.Contains(d.names, m.name) {
			d.names = append(d.names, m.name)
		}
		if x := (setting{m.producers, m.loaded}); !slices.Contains(settings, x) {
			settings = append(settings, x)
		}
	}
	for _, x := range settings {
		title := "1 producer"
		if x.producers > 1 {
			title = fmt.Sprintf("%d producers", x.producers)
		}
		if x.loaded {
			title += ", with load"
		}
		d.panels = append(d.panels, ratioPanel(title, d.names, chanMailboxName,
			func(name string) float64 { return r.mailboxOf(name, x.producers, x.loaded).nsPerMsg }))
	}
	return d.save(file)
}

// scalingTitle is the scaling chart's title and its caption in the report.
func (r *report) scalingTitle() string {
	return "Scaling: time per no-op job over the hand-written pool's (shared chan, capacity = workers)"
}

// scalingChart draws, for each setting, each contender's time per no-op job
// over the hand-written pool's: a row per setting, a panel per contender.
func (r *report) scalingChart(file string) error {
	d := dotChart{title: r.scalingTitle(), xLabel: "x hand-written (shared chan, capacity = workers), log scale", ref: 1, log: true,
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

// ratioPanel is a panel of each of names' figure over base's.
func ratioPanel(title string, names []string, base string, figure func(name string) float64) dotPanel {
	panel := dotPanel{title: title}
	for _, name := range names {
		panel.values = append(panel.values, figure(name)/figure(base))
	}
	return panel
}

func (r *report) streamTitle() string {
	return fmt.Sprintf("Streaming uneven jobs, %d workers: p99 time in system (median of %d runs)", r.streamWorkers, r.streamRuns)
}

// streamChart plots each contender's p99 time in system against the load,
// one line per contender, with the legend to the right of the plot. The
// contenders' points are spread a little sideways at each load so that
// equal figures do not hide one another.
func (r *report) streamChart(file string) error {
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
	body := titled(dc, r.streamTitle())
	lw := legend.Rectangle(body).Size().X + vg.Points(24)
	p.Draw(draw.Crop(body, vg.Points(6), -lw, vg.Points(4), 0))
	legend.Draw(draw.Crop(body, w-lw+vg.Points(12), 0, 0, -vg.Points(20)))
	return writePNG(file, img)
}
