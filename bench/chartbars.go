package main

import (
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A barChart is a horizontal grouped bar chart: one row per name, top to
// bottom, so that long names read as they are, with a bar per series in
// each row, the first on top; one panel or more side by side, each with a
// value axis of its own, and a legend naming the series. On a linear axis
// the bars start at 0; on a logarithmic one, at the axis' left end, below
// the panel's least value.
type barChart struct {
	title  string
	names  []string
	series []string // named in the legend, drawn in barColors' order
	panels []barPanel
	xLabel string
	log    bool
	label  func(float64) string // the figure written at the end of each bar
	width  vg.Length
	cols   int // panels to a row; 0: all in one row
}

// A barPanel is one panel of a barChart: values[s][i] is series s's bar
// in row i.
type barPanel struct {
	title  string
	values [][]float64 // NaN, infinite or negative: no bar
}

// barColors are the series' colours, in order: a light blue, then a dark
// orange, so that the second series stands out, then two more.
var barColors = []color.Color{rgb(0x9ecae1), rgb(0xe6550d), rgb(0x31a354), rgb(0x756bb1)}

// barWidth is the thickness of one bar.
const barWidth = 10

// save draws the chart into file, a PNG.
func (b barChart) save(file string) error {
	n, m := len(b.names), len(b.series)
	legend := plot.NewLegend()
	legend.TextStyle.Font.Size = vg.Points(10)
	legend.ThumbnailWidth = vg.Points(18)
	plots := make([]*plot.Plot, len(b.panels))
	for pi, panel := range b.panels {
		lo, hi := b.valueRange(panel)
		p, grid := rowsPanel(panel.title, b.names, lo, hi, b.log, pi%b.perRow() == 0)
		grid.Horizontal = draw.LineStyle{}
		// Each bar stands on base, at the axis' left end.
		base, err := plotter.NewBarChart(slices.Repeat(plotter.Values{lo}, n), vg.Points(barWidth))
		if err != nil {
			return err
		}
		base.Horizontal = true
		for s, values := range panel.values {
			// gonum draws value j at row j from the bottom: the rows are
			// given bottom first, a missing figure as no bar.
			bars := make(plotter.Values, n)
			var labels plotter.XYLabels
			for i, v := range values {
				if !b.plottable(v) {
					continue
				}
				bars[n-1-i] = v - lo
				labels.XYs = append(labels.XYs, plotter.XY{X: v, Y: float64(n - 1 - i)})
				labels.Labels = append(labels.Labels, b.label(v))
			}
			chart, err := plotter.NewBarChart(bars, vg.Points(barWidth))
			if err != nil {
				return err
			}
			chart.Horizontal = true
			chart.StackOn(base)
			chart.Color = barColors[s%len(barColors)]
			chart.LineStyle = draw.LineStyle{}
			// The first series on top, the rest below it.
			chart.Offset = vg.Points(barWidth * (float64(m-1)/2 - float64(s)))
			p.Add(chart, figures{XYLabels: labels, align: draw.XLeft, offset: vg.Points(4), rise: chart.Offset})
			if pi == 0 {
				legend.Add(b.series[s], chart)
			}
		}
		plots[pi] = p
	}
	rows := (len(plots) + b.perRow() - 1) / b.perRow()
	height := vg.Points(float64(110 + rows*(8+barWidth*m)*n + (rows-1)*50))
	return saveTiled(file, b.title, b.xLabel, b.width, height, plots, b.cols, &legend)
}

// perRow returns how many panels go side by side in a row.
func (b barChart) perRow() int {
	if b.cols > 0 {
		return b.cols
	}
	return max(len(b.panels), 1)
}

// plottable says whether v can be drawn as a bar: a number, not negative,
// and above 0 on a logarithmic axis.
func (b barChart) plottable(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 && (v > 0 || !b.log)
}

// valueRange returns panel's value axis' range: from 0 on a linear axis,
// or from a little below its least value on a logarithmic one, to its
// largest value, widened to leave room for the figure written beyond it,
// measured against an estimate of a panel's width.
func (b barChart) valueRange(panel barPanel) (lo, hi float64) {
	labelSty := figureStyle()
	width := panelWidth(b.width, b.names, b.perRow())
	lo, hi, need := math.Inf(1), 0.0, 0.0
	for _, values := range panel.values {
		for _, v := range values {
			if !b.plottable(v) {
				continue
			}
			lo, hi = min(lo, v), max(hi, v)
			need = max(need, float64((labelSty.Width(b.label(v))+vg.Points(10))/width))
		}
	}
	if hi == 0 {
		return 0, 1
	}
	fr := min(0.45, max(0.04, need))
	if !b.log {
		return 0, hi / (1 - fr)
	}
	// The least bar a sixth of the axis long, the figures' room beyond
	// the largest.
	a, z := math.Log(lo), math.Log(hi)
	span := max(z-a, 0.1) / (1 - fr - 1.0/6)
	return math.Exp(a - span/6), math.Exp(a - span/6 + span)
}
