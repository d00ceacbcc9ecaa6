package main

import (
	"image/color"
	"math"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The looks of the charts: a colour and a marker per contender, the same in
// every chart, and markers drawn thick enough to read.

// A look is how one name is drawn in every chart: its colour and marker.
type look struct {
	color  color.Color
	marker marker
}

func rgb(hex uint32) color.Color {
	return color.RGBA{R: uint8(hex >> 16), G: uint8(hex >> 8), B: uint8(hex), A: 255}
}

// looks gives each contender its own colour and marker, the same in every
// chart: d3's category10 and a few more colours (black for the floor), and
// markers that tell apart the contenders that share a shape.
var looks = map[string]look{
	crewName:          {rgb(0x1f77b4), marker{shape: circle, filled: true}},
	"crew RoundRobin": {rgb(0x17becf), marker{shape: square, filled: true}},
	"crew Random":     {rgb(0x9467bd), marker{shape: triangle, filled: true}},
	crew1024Name:      {rgb(0x393b79), marker{shape: downTriangle, filled: true}},
	crewBatchName:     {rgb(0x6b6ecf), marker{shape: downTriangle}},
	floorName:         {rgb(0x000000), marker{shape: bar}},
	baselineName:      {rgb(0xd62728), marker{shape: diamond, filled: true}},
	chan1024Name:      {rgb(0xff7f0e), marker{shape: circle}},
	shardsName:        {rgb(0x8c564b), marker{shape: square}},
	errgroupName:      {rgb(0x2ca02c), marker{shape: triangle}},
	concName:          {rgb(0xe377c2), marker{shape: cross}},
	"ants v2":         {rgb(0xbcbd22), marker{shape: plus}},
	"pond v2":         {rgb(0x7f7f7f), marker{shape: diamond}},
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
	bar // a thick level line: the floor
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
	case bar:
		c.StrokeLine2(draw.LineStyle{Color: sty.Color, Width: vg.Points(3)}, at(-1.2, 0).X, pt.Y, at(1.2, 0).X, pt.Y)
		return
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
