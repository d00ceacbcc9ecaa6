package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
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

// A look is how one name is drawn in every chart: its colour and marker.
type look struct {
	color  color.Color
	marker marker
}

func rgb(hex uint32) color.Color {
	return color.RGBA{R: uint8(hex >> 16), G: uint8(hex >> 8), B: uint8(hex), A: 255}
}

// looks gives each contender its own colour and marker, the same in every
// chart: d3's category10 and one more colour, and markers that tell apart
// the contenders that share a shape.
var looks = map[string]look{
	crewName:            {rgb(0x1f77b4), marker{shape: circle, filled: true}},
	"crew RoundRobin":   {rgb(0x17becf), marker{shape: square, filled: true}},
	"crew Random":       {rgb(0x9467bd), marker{shape: triangle, filled: true}},
	crew1024Name:        {rgb(0x393b79), marker{shape: downTriangle, filled: true}},
	baselineName:        {rgb(0xd62728), marker{shape: diamond, filled: true}},
	chan1024Name:        {rgb(0xff7f0e), marker{shape: circle}},
	shardsName:          {rgb(0x8c564b), marker{shape: square}},
	"errgroup SetLimit": {rgb(0x2ca02c), marker{shape: triangle}},
	"conc pool":         {rgb(0xe377c2), marker{shape: cross}},
	"ants v2":           {rgb(0xbcbd22), marker{shape: plus}},
	"pond v2":           {rgb(0x7f7f7f), marker{shape: diamond}},
}

// lookOf returns name's look: a contender's own, or a dark grey dot for the
// rows of charts that are not contenders (placements, mailboxes), which
// their labels name.
func lookOf(name string) look {
	if l, ok := looks[name]; ok {
		return l
	}
	return look{rgb(0x333333), marker{shape: circle, filled: true}}
}

func (l look) glyph() draw.GlyphStyle {
	return draw.GlyphStyle{Color: l.color, Radius: vg.Points(4.5), Shape: l.marker}
}

// A marker is a glyph drawn with a line thick enough to tell its shape at
// a glance, unlike gonum's hairline outlines. Hollow ones are filled white,
// so that a line through them does not show.
type marker struct {
	shape  int
	filled bool
}

const (
	circle = iota
	square
	triangle
	diamond
	cross
	plus
	downTriangle
)

// DrawGlyph implements draw.GlyphDrawer.
func (m marker) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	at := func(dx, dy float64) vg.Point { return vg.Point{X: pt.X + r*vg.Length(dx), Y: pt.Y + r*vg.Length(dy)} }
	var path vg.Path
	switch m.shape {
	case circle:
		path.Move(at(1, 0))
		path.Arc(pt, r, 0, 2*math.Pi)
	case square:
		path.Move(at(-0.85, -0.85))
		path.Line(at(0.85, -0.85))
		path.Line(at(0.85, 0.85))
		path.Line(at(-0.85, 0.85))
	case triangle:
		path.Move(at(0, 1.15))
		path.Line(at(-1.0, -0.58))
		path.Line(at(1.0, -0.58))
	case downTriangle:
		path.Move(at(0, -1.15))
		path.Line(at(-1.0, 0.58))
		path.Line(at(1.0, 0.58))
	case diamond:
		path.Move(at(0, 1.2))
		path.Line(at(0.9, 0))
		path.Line(at(0, -1.2))
		path.Line(at(-0.9, 0))
	case cross, plus:
		d := 0.8
		ends := [][2]vg.Point{{at(-d, -d), at(d, d)}, {at(-d, d), at(d, -d)}}
		if m.shape == plus {
			ends = [][2]vg.Point{{at(0, -1.1), at(0, 1.1)}, {at(-1.1, 0), at(1.1, 0)}}
		}
		for _, e := range ends {
			c.StrokeLine2(draw.LineStyle{Color: sty.Color, Width: vg.Points(2)}, e[0].X, e[0].Y, e[1].X, e[1].Y)
		}
		return
	}
	path.Close()
	if m.filled {
		c.Fill(path)
		return
	}
	c.SetColor(color.White)
	c.Fill(path)
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.6)})
	c.Stroke(path)
}

// markerThumb draws a look's marker, alone, as a legend thumbnail.
type markerThumb struct{ look }

func (m markerThumb) Thumbnail(c *draw.Canvas) {
	c.DrawGlyph(m.glyph(), c.Center())
}

var refLine = draw.LineStyle{Color: color.Black, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}

// A dotChart is a horizontal dot chart: one row per name, top to bottom, so
// that long names read as they are; one panel or more side by side, each
// a value per row and sharing the value axis' range. With a reference
// value, a dashed line marks it and a stem joins each dot to it.
type dotChart struct {
	title  string
	names  []string
	panels []dotPanel
	xLabel string
	ref    float64 // 0 for none
	log    bool
	label  func(float64) string // the figure written beside each dot
	width  vg.Length
}

type dotPanel struct {
	title  string
	values []float64 // NaN or infinite: no dot
}

func (d dotChart) save(file string) error {
	lo, hi := d.valueRange()
	n := len(d.names)
	rowY := func(i int) float64 { return float64(n - 1 - i) }
	plots := make([]*plot.Plot, len(d.panels))
	for pi, panel := range d.panels {
		p := plot.New()
		p.Title.Text = panel.title
		p.X.Min, p.X.Max = lo, hi
		p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
		p.X.Tick.Marker = linearTicks{}
		if d.log {
			p.X.Scale = plot.LogScale{}
			p.X.Tick.Marker = oneTwoFive
		}
		ticks := make([]plot.Tick, n)
		for i, name := range d.names {
			ticks[i] = plot.Tick{Value: rowY(i), Label: name}
			if pi > 0 {
				ticks[i].Label = ""
			}
		}
		p.Y.Tick.Marker = plot.ConstantTicks(ticks)
		p.Y.Tick.Length, p.Y.Width = 0, 0
		p.Y.Tick.Label.Font.Size = vg.Points(10)
		grid := plotter.NewGrid()
		grid.Vertical.Color = color.Gray{Y: 225}
		grid.Horizontal.Color = color.Gray{Y: 235}
		p.Add(grid)
		if d.ref > 0 {
			ref, err := plotter.NewLine(plotter.XYs{{X: d.ref, Y: -0.6}, {X: d.ref, Y: float64(n) - 0.4}})
			if err != nil {
				return err
			}
			ref.LineStyle = refLine
			p.Add(ref)
		}
		// The figures, beside the dots on the side away from the stems:
		// right, or left of a dot below the reference.
		var right, left plotter.XYLabels
		for i, v := range panel.values {
			if !d.plottable(v) {
				continue
			}
			l := lookOf(d.names[i])
			y := rowY(i)
			if d.ref > 0 {
				stem, err := plotter.NewLine(plotter.XYs{{X: d.ref, Y: y}, {X: v, Y: y}})
				if err != nil {
					return err
				}
				stem.LineStyle = draw.LineStyle{Color: l.color, Width: vg.Points(2)}
				p.Add(stem)
			}
			dot, err := plotter.NewScatter(plotter.XYs{{X: v, Y: y}})
			if err != nil {
				return err
			}
			dot.GlyphStyle = l.glyph()
			p.Add(dot)
			side := &right
			if d.ref > 0 && v < d.ref {
				side = &left
			}
			side.XYs = append(side.XYs, plotter.XY{X: v, Y: y})
			side.Labels = append(side.Labels, d.label(v))
		}
		p.Add(figures{right, draw.XLeft, vg.Points(8)}, figures{left, draw.XRight, -vg.Points(8)})
		plots[pi] = p
	}
	height := vg.Points(float64(86 + 24*n))
	return saveTiled(file, d.title, d.xLabel, d.width, height, plots)
}

// figures writes labels beside their points, offset sideways. Unlike
// plotter.Labels it has no glyph boxes: those would pad each panel's data
// area by its own amount, and the panels' scales would differ.
type figures struct {
	plotter.XYLabels
	align  draw.XAlignment
	offset vg.Length
}

func (f figures) Plot(c draw.Canvas, p *plot.Plot) {
	sty := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, 9), Handler: p.TextHandler,
		XAlign: f.align, YAlign: draw.YCenter}
	x, y := p.Transforms(&c)
	for i, label := range f.Labels {
		c.FillText(sty, vg.Point{X: x(f.XYs[i].X) + f.offset, Y: y(f.XYs[i].Y) + vg.Points(1)}, label)
	}
}

// plottable says whether v can be drawn: a number, and above 0 on a
// logarithmic axis. A figure whose reference is missing is not.
func (d dotChart) plottable(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && (v > 0 || !d.log)
}

// valueRange returns the value axis' range: the values' and the
// reference's, widened on each side to leave room for the figures written
// beside the dots, measured against an estimate of a panel's width.
func (d dotChart) valueRange() (lo, hi float64) {
	labelSty := text.Style{Font: font.From(plot.DefaultFont, 9), Handler: plot.DefaultTextHandler}
	nameSty := text.Style{Font: font.From(plot.DefaultFont, 10), Handler: plot.DefaultTextHandler}
	var names vg.Length
	for _, name := range d.names {
		names = max(names, nameSty.Width(name))
	}
	panel := (d.width - names - vg.Points(40)) / vg.Length(len(d.panels))
	lo, hi = math.Inf(1), math.Inf(-1)
	if d.ref > 0 {
		lo, hi = d.ref, d.ref
	}
	var left, right vg.Length // room the figures need beyond lo and hi
	for _, p := range d.panels {
		for _, v := range p.values {
			if !d.plottable(v) {
				continue
			}
			lo, hi = min(lo, v), max(hi, v)
			need := labelSty.Width(d.label(v)) + vg.Points(16)
			if d.ref > 0 && v < d.ref {
				left = max(left, need)
			} else {
				right = max(right, need)
			}
		}
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0.5, 2
	}
	t, inv := func(x float64) float64 { return x }, func(x float64) float64 { return x }
	if d.log {
		t, inv = math.Log, math.Exp
	}
	a, b := t(lo), t(hi)
	if b-a < 1e-9 {
		a, b = a-0.05, b+0.05
	}
	fl := min(0.3, max(0.04, float64(left/panel)))
	fr := min(0.4, max(0.04, float64(right/panel)))
	span := (b - a) / (1 - fl - fr)
	return inv(a - fl*span), inv(b + fr*span)
}

// saveTiled draws plots side by side, their data areas aligned and of one
// size, under a title and over a caption for their value axes, into a PNG.
// The caption is not the axes' label: gonum centres that at the midpoint of
// the axis' values, which on a logarithmic axis is far right, and pads the
// data area to fit it there, by an amount that differs from panel to panel.
func saveTiled(file, title, caption string, w, h vg.Length, plots []*plot.Plot) error {
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(144))
	dc := draw.New(img)
	body := titled(dc, title)
	sty := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, 11), Handler: plot.DefaultTextHandler,
		XAlign: draw.XCenter, YAlign: draw.YBottom}
	body.FillText(sty, vg.Point{X: body.Center().X, Y: body.Min.Y + vg.Points(4)}, caption)
	body = draw.Crop(body, 0, 0, sty.Rectangle(caption).Size().Y+vg.Points(8), 0)
	// The panels' titles go over their data areas, not over the whole tile
	// with the names beside the first.
	titles := make([]string, len(plots))
	panelSty := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, 11), Handler: plot.DefaultTextHandler,
		XAlign: draw.XCenter, YAlign: draw.YTop}
	for i, p := range plots {
		titles[i], p.Title.Text = p.Title.Text, ""
	}
	top := body.Max.Y
	body = draw.Crop(body, 0, 0, 0, -panelSty.Rectangle("Mp").Size().Y-vg.Points(6))
	tiles := draw.Tiles{Rows: 1, Cols: len(plots), PadX: vg.Points(14), PadLeft: vg.Points(6), PadRight: vg.Points(10), PadBottom: vg.Points(4)}
	canvases := plot.Align([][]*plot.Plot{plots}, tiles, body)
	for i, p := range plots {
		c := canvases[0][i]
		p.Draw(c)
		data := p.DataCanvas(c)
		body.FillText(panelSty, vg.Point{X: (data.Min.X + data.Max.X) / 2, Y: top}, titles[i])
	}
	return writePNG(file, img)
}

// titled writes title at the top of c, on a white ground, and returns the
// rest of c.
func titled(c draw.Canvas, title string) draw.Canvas {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	sty := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, 13), Handler: plot.DefaultTextHandler,
		XAlign: draw.XCenter, YAlign: draw.YTop}
	c.FillText(sty, vg.Point{X: c.Center().X, Y: c.Max.Y - vg.Points(6)}, title)
	return draw.Crop(c, 0, 0, 0, -sty.Rectangle(title).Size().Y-vg.Points(14))
}

func writePNG(file string, img *vgimg.Canvas) (err error) {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer func() {
		if e := f.Close(); err == nil {
			err = e
		}
	}()
	_, err = vgimg.PngCanvas{Canvas: img}.WriteTo(f)
	return err
}

// logTicks marks a logarithmic axis at each of mults times the powers of
// ten, labelled as plain numbers, keeping clear of the axis' ends if told
// to: a label hanging over an end pads the data area by an amount that
// depends on its width, and side-by-side panels would get different scales.
type logTicks struct {
	mults []float64
	clear float64 // no mark within this factor of either end
}

var oneTwoFive = logTicks{[]float64{1, 2, 5}, 1.12}

func (t logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		for _, m := range t.mults {
			if v := m * math.Pow(10, e); v >= lo*t.clear && v <= hi/t.clear {
				ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return ts
}

// linearTicks marks a linear axis every 1, 2 or 5 times a power of ten,
// whichever gives 4 to 10 marks, labelled with as many decimals as the step
// needs, keeping clear of the axis' ends as logTicks does.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	base := math.Pow(10, math.Floor(math.Log10(hi-lo)))
	step := base / 50
	for _, m := range []float64{1, 0.5, 0.2, 0.1, 0.05} {
		if (hi-lo)/(base*m) >= 4 {
			step = base * m
			break
		}
	}
	decimals := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	margin := 0.03 * (hi - lo)
	var ts []plot.Tick
	for v := math.Ceil((lo+margin)/step) * step; v <= hi-margin; v += step {
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
	}
	return ts
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
		panel := dotPanel{title: submitters(subs)}
		base := r.overheadOf(baselineName, subs).nsPerJob
		for _, name := range d.names {
			panel.values = append(panel.values, r.overheadOf(name, subs).nsPerJob/base)
		}
		d.panels = append(d.panels, panel)
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
// channel's, for one producer and for four.
func (r *report) mailboxChart(file string) error {
	d := dotChart{title: r.mailboxTitle(), xLabel: "x buffered chan (1024), log scale", ref: 1, log: true,
		label: ratioLabel, width: 10 * vg.Inch}
	var producers []int
	for _, m := range r.mailboxes {
		if !slices.Contains(d.names, m.name) {
			d.names = append(d.names, m.name)
		}
		if !slices.Contains(producers, m.producers) {
			producers = append(producers, m.producers)
		}
	}
	for _, np := range producers {
		panel := dotPanel{title: "1 producer"}
		if np > 1 {
			panel.title = fmt.Sprintf("%d producers", np)
		}
		base := r.mailboxOf("buffered chan (1024)", np).nsPerMsg
		for _, name := range d.names {
			panel.values = append(panel.values, r.mailboxOf(name, np).nsPerMsg/base)
		}
		d.panels = append(d.panels, panel)
	}
	return d.save(file)
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
