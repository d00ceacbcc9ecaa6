package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The drawing kit under the report's charts: dot charts of one or more
// panels sharing a scale, tick marks, and PNG output.

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
	look   string    // the name whose look draws every dot; "" for each row's own
}

// rowsPanel returns a panel of a chart with a row per name and a value
// axis from lo to hi (logarithmic if log), the names written beside the
// first panel only, and its grid, already added, whose vertical lines
// mark the values.
func rowsPanel(title string, names []string, lo, hi float64, log, first bool) (*plot.Plot, *plotter.Grid) {
	p := plot.New()
	p.Title.Text = title
	p.X.Min, p.X.Max = lo, hi
	p.Y.Min, p.Y.Max = -0.6, float64(len(names))-0.4
	p.X.Tick.Marker = linearTicks{}
	if log {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = oneTwoFive
	}
	rowTicks(p, names, first)
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 225}
	p.Add(grid)
	return p, grid
}

func (d dotChart) save(file string) error {
	lo, hi := d.valueRange()
	n := len(d.names)
	rowY := func(i int) float64 { return float64(n - 1 - i) }
	plots := make([]*plot.Plot, len(d.panels))
	for pi, panel := range d.panels {
		p, grid := rowsPanel(panel.title, d.names, lo, hi, d.log, pi == 0)
		grid.Horizontal.Color = color.Gray{Y: 235}
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
			if panel.look != "" {
				l = lookOf(panel.look)
			}
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
		p.Add(figures{XYLabels: right, align: draw.XLeft, offset: vg.Points(8)},
			figures{XYLabels: left, align: draw.XRight, offset: -vg.Points(8)})
		plots[pi] = p
	}
	height := vg.Points(float64(86 + 24*n))
	return saveTiled(file, d.title, d.xLabel, d.width, height, plots, 0, nil)
}

// figures writes labels beside their points, offset sideways and raised
// by rise. Unlike plotter.Labels it has no glyph boxes: those would pad
// each panel's data area by its own amount, and the panels' scales would
// differ.
type figures struct {
	plotter.XYLabels
	align  draw.XAlignment
	offset vg.Length
	rise   vg.Length
}

func (f figures) Plot(c draw.Canvas, p *plot.Plot) {
	sty := text.Style{Color: color.Black, Font: font.From(plot.DefaultFont, 9), Handler: p.TextHandler,
		XAlign: f.align, YAlign: draw.YCenter}
	x, y := p.Transforms(&c)
	for i, label := range f.Labels {
		c.FillText(sty, vg.Point{X: x(f.XYs[i].X) + f.offset, Y: y(f.XYs[i].Y) + f.rise + vg.Points(1)}, label)
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
	labelSty := figureStyle()
	panel := panelWidth(d.width, d.names, len(d.panels))
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

// saveTiled draws plots side by side, cols to a row (all in one row if
// cols is 0), their data areas aligned and of one size, under a title
// and, if legend is not nil, a legend at the right, and over a caption for
// their value axes, into a PNG.
// The caption is not the axes' label: gonum centres that at the midpoint of
// the axis' values, which on a logarithmic axis is far right, and pads the
// data area to fit it there, by an amount that differs from panel to panel.
func saveTiled(file, title, caption string, w, h vg.Length, plots []*plot.Plot, cols int, legend *plot.Legend) error {
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(144))
	dc := draw.New(img)
	body := titled(dc, title)
	if legend != nil {
		legend.Top, legend.Left = true, false
		lh := legend.Rectangle(body).Size().Y
		legend.Draw(draw.Crop(body, 0, -vg.Points(12), 0, 0))
		body = draw.Crop(body, 0, 0, 0, -lh-vg.Points(6))
	}
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
	if cols <= 0 {
		cols = len(plots)
	}
	var grid [][]*plot.Plot
	for i := 0; i < len(plots); i += cols {
		row := make([]*plot.Plot, cols) // a short last row is padded with nils, which Align skips
		copy(row, plots[i:])
		grid = append(grid, row)
	}
	titleH := panelSty.Rectangle("Mp").Size().Y + vg.Points(6)
	body = draw.Crop(body, 0, 0, 0, -titleH)
	tiles := draw.Tiles{Rows: len(grid), Cols: cols, PadX: vg.Points(14), PadY: titleH + vg.Points(10),
		PadLeft: vg.Points(6), PadRight: vg.Points(10), PadBottom: vg.Points(4)}
	canvases := plot.Align(grid, tiles, body)
	for i, p := range plots {
		c := canvases[i/cols][i%cols]
		p.Draw(c)
		data := p.DataCanvas(c)
		body.FillText(panelSty, vg.Point{X: (data.Min.X + data.Max.X) / 2, Y: c.Max.Y + titleH}, titles[i])
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

// rowTicks labels p's rows with names, the first at the top, on the
// leftmost panel only (first), and hides the y axis' line and ticks.
func rowTicks(p *plot.Plot, names []string, first bool) {
	n := len(names)
	ticks := make([]plot.Tick, n)
	for i, name := range names {
		ticks[i] = plot.Tick{Value: float64(n - 1 - i)}
		if first {
			ticks[i].Label = name
		}
	}
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Length, p.Y.Width = 0, 0
	p.Y.Tick.Label.Font.Size = vg.Points(10)
}

// figureStyle is the style of the figures written beside dots and bars.
func figureStyle() text.Style {
	return text.Style{Font: font.From(plot.DefaultFont, 9), Handler: plot.DefaultTextHandler}
}

// panelWidth estimates the width of each of panels panels side by side in
// a chart width wide whose rows are named names, on the leftmost.
func panelWidth(width vg.Length, names []string, panels int) vg.Length {
	nameSty := text.Style{Font: font.From(plot.DefaultFont, 10), Handler: plot.DefaultTextHandler}
	var widest vg.Length
	for _, name := range names {
		widest = max(widest, nameSty.Width(name))
	}
	return (width - widest - vg.Points(40)) / vg.Length(panels)
}
func ratioLabel(v float64) string { return fmt.Sprintf("%.2fx", v) }

func msLabel(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.1f ms", v)
}

// ratioPanel is a panel of each of names' figure over base's.
func ratioPanel(title string, names []string, base string, figure func(name string) float64) dotPanel {
	panel := dotPanel{title: title}
	for _, name := range names {
		panel.values = append(panel.values, figure(name)/figure(base))
	}
	return panel
}
