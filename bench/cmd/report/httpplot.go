package main

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// httpPlot draws the net/http server sweep: the wheel's CPU ÷ the runtime's
// (the median of the rounds' ratios) against connections (log-x), one line
// per request deadline, with parity marked. Lines are told apart by their
// deadline, not by library, so they take the palette in order.
func (r *report) httpPlot(path string) error {
	p := plot.New()
	p.Title.Text = "net/http server CPU, wheel ÷ runtime"
	p.X.Label.Text = "connections"
	p.Y.Label.Text = "CPU ratio (below 1: the wheel uses less)"
	p.X.Scale = plot.LogScale{}
	p.Legend.Top, p.Legend.Left = true, false
	byDeadline := map[float64]plotter.XYs{}
	var deadlines []float64 // in the rows' order: ascending
	lo, hi := 1.0, 1.0
	for _, row := range httpRows(r.httpServer) {
		if row.lib != "wheel" || math.IsNaN(row.cpuRatio) {
			continue
		}
		if _, ok := byDeadline[row.deadlineMs]; !ok {
			deadlines = append(deadlines, row.deadlineMs)
		}
		byDeadline[row.deadlineMs] = append(byDeadline[row.deadlineMs], plotter.XY{X: float64(row.conns), Y: row.cpuRatio})
		lo, hi = math.Min(lo, row.cpuRatio), math.Max(hi, row.cpuRatio)
	}
	if len(deadlines) == 0 {
		return nil // no sweep in this run: the section has only its table
	}
	xmin, xmax := math.Inf(1), math.Inf(-1)
	var ticks plot.ConstantTicks // one per connection count swept
	for i, d := range deadlines {
		xy := byDeadline[d]
		for _, v := range xy {
			xmin, xmax = math.Min(xmin, v.X), math.Max(xmax, v.X)
			if !slices.ContainsFunc(ticks, func(t plot.Tick) bool { return t.Value == v.X }) {
				ticks = append(ticks, plot.Tick{Value: v.X, Label: fmt.Sprint(v.X)})
			}
		}
		line, points, err := linePoints(xy, palette[i%len(palette)])
		if err != nil {
			return err
		}
		points.Shape = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PlusGlyph{}}[i%4]
		p.Add(line, points)
		p.Legend.Add(fmt.Sprintf("deadline %g ms", d), line, points)
	}
	parity, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: 1}, {X: xmax, Y: 1}})
	if err != nil {
		return err
	}
	parity.Color, parity.Dashes = color.Gray{Y: 0x80}, []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(parity, plotter.NewGrid())
	p.Legend.Add("parity", parity)
	p.X.Tick.Marker = ticks
	// Room above the highest point for the legend.
	p.Y.Min, p.Y.Max = math.Min(0.8, lo-0.05), math.Max(1.2, hi)+0.05*float64(len(deadlines)+1)
	p.X.Min, p.X.Max = xmin/1.3, xmax*1.3
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}
