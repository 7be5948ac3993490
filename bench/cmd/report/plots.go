package main

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// One color per library, in every plot, in the order of libs.
var palette = []color.Color{
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, // timingwheel
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // runtime
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, // go-zero
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
}

func libColor(id string) color.Color {
	for i, l := range libs {
		if l.id == id {
			return palette[i]
		}
	}
	return palette[len(palette)-1]
}

// ticks125 labels 1, 2 and 5 times each power of ten in range, for log
// axes whose range spans less than a few decades.
type ticks125 struct{}

func (ticks125) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v >= lo && v <= hi {
				ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return ts
}

func (r *report) plots() error {
	for _, op := range []struct{ id, file, title string }{
		{"AfterFuncStop", "afterfuncstop.png", "AfterFunc+Stop"},
		{"Reset", "reset.png", "Reset"},
	} {
		if err := r.sweepPlot(op.id, op.title, filepath.Join(r.docs, op.file)); err != nil {
			return err
		}
	}
	for _, load := range []string{"idle", "busy"} {
		if err := r.latenessPlot(load, filepath.Join(r.docs, "lateness_"+load+".png")); err != nil {
			return err
		}
	}
	if err := r.httpPlot(filepath.Join(r.docs, "httpserver_cpu.png")); err != nil {
		return err
	}
	return r.heapPlot(filepath.Join(r.docs, "bytes_per_timer.png"))
}

var nValues = map[string]float64{"1k": 1e3, "100k": 1e5, "1M": 1e6, "5M": 5e6}

// sweepPlot draws ns/op against N (log-x) for every library; N=0 has no
// place on a log axis and is left to the table.
func (r *report) sweepPlot(op, name, path string) error {
	p := plot.New()
	p.Title.Text = name + " with N timers pending"
	p.X.Label.Text = "N pending timers"
	p.Y.Label.Text = "ns/op"
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, ticks125{}
	p.Legend.Top, p.Legend.Left = true, true
	for _, l := range libs {
		var xy plotter.XYs
		for _, n := range pendingNs {
			x, ok := nValues[n]
			if v, found := r.ops.median(key(op, l.id, n), "ns/op"); ok && found {
				xy = append(xy, plotter.XY{X: x, Y: v})
			}
		}
		if len(xy) == 0 {
			continue
		}
		line, points, err := linePoints(xy, libColor(l.id))
		if err != nil {
			return err
		}
		p.Add(line, points)
		p.Legend.Add(l.title, line, points)
	}
	return p.Save(6*vg.Inch, 4*vg.Inch, path)
}

// linePoints is a line through xy with a dot on every point, in color c.
func linePoints(xy plotter.XYs, c color.Color) (*plotter.Line, *plotter.Scatter, error) {
	line, err := plotter.NewLine(xy)
	if err != nil {
		return nil, nil, err
	}
	points, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, nil, err
	}
	line.Color, line.Width = c, vg.Points(1.5)
	points.Color, points.Shape = c, draw.CircleGlyph{}
	return line, points, nil
}

// latenessPlot draws the distribution (CDF) of lateness for every run under
// load: a color per library, dashed for the coarser tick. The x axis ends
// past the largest p99 of the runtime and this module, so their bulk stays
// visible; a curve that leaves the right edge goes on beyond it.
func (r *report) latenessPlot(load, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Lateness of 100k timers over 2 s (%s); curves leaving the right edge go on", load)
	p.X.Label.Text = "callback start − deadline (ms); negative is early"
	p.Y.Label.Text = "fraction of timers"
	// Bottom right, raised clear of curves that stay low (go-zero's).
	p.Legend.Top, p.Legend.Left, p.Legend.YOffs = false, false, vg.Inch
	xmin, xmax := 0.0, 0.0
	for _, a := range r.accuracy {
		if a.Load != load || len(a.Lateness.CDF) == 0 {
			continue
		}
		xy := make(plotter.XYs, len(a.Lateness.CDF))
		for j, v := range a.Lateness.CDF {
			xy[j] = plotter.XY{X: v, Y: float64(j+1) / float64(len(a.Lateness.CDF))}
		}
		xmin = math.Min(xmin, a.Lateness.CDF[0])
		if a.Lib != "gozero" {
			xmax = math.Max(xmax, a.Lateness.P99)
		}
		line, err := plotter.NewLine(xy)
		if err != nil {
			return err
		}
		line.Color, line.Width = libColor(a.Lib), vg.Points(1.5)
		name := title(a.Lib)
		if a.TickMs > 0 {
			name += fmt.Sprintf(", tick %s ms", num(a.TickMs))
			if a.TickMs > 1 {
				line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			}
		}
		p.Add(line)
		p.Legend.Add(name, line)
	}
	p.Add(plotter.NewGrid())
	p.X.Min, p.X.Max = xmin*1.1-1, xmax*1.2
	p.Y.Min, p.Y.Max = 0, 1
	return p.Save(7*vg.Inch, 4*vg.Inch, path)
}

// heapPlot draws bytes per pending timer, and what stays after Stop, per library.
func (r *report) heapPlot(path string) error {
	p := plot.New()
	p.Title.Text = "Live heap per timer, 1M timers"
	p.Y.Label.Text = "bytes per timer"
	var names []string
	var pending, after plotter.Values
	for _, l := range libs {
		k := key("Heap", l.id, "1M")
		v, ok := r.heap.median(k, "B/timer")
		if !ok {
			continue
		}
		a, _ := r.heap.median(k, "live-after-stop-B/timer")
		names = append(names, l.title)
		pending = append(pending, v)
		after = append(after, math.Max(a, 0))
	}
	w := vg.Points(24)
	b1, err := plotter.NewBarChart(pending, w)
	if err != nil {
		return err
	}
	b1.Color, b1.Offset = palette[0], -w/2
	b2, err := plotter.NewBarChart(after, w)
	if err != nil {
		return err
	}
	b2.Color, b2.Offset = palette[3], w/2
	p.Add(b1, b2)
	p.Legend.Add("pending", b1)
	p.Legend.Add("after Stop", b2)
	p.Legend.Top = true
	p.NominalX(names...)
	return p.Save(5*vg.Inch, 4*vg.Inch, path)
}
