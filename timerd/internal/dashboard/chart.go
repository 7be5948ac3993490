package dashboard

import (
	"math"
	"time"
)

// chart is the overview's processed/failed chart, laid out here and drawn
// by overview.html as inline SVG (no script, which the CSP forbids): one
// bar per minute of Throughput's window, oldest on the left, the current
// minute (still counting) on the right; a processed bar, and the failed
// bar over it from the same baseline. Hovering a bar shows its minute and
// counts (an SVG <title>); each bar also carries them as data-processed
// and data-failed, for tests.
type chart struct {
	Bars              []chartBar
	Processed, Failed int // the window's totals
	// Max is the y axis' top: the largest count of a minute rounded up to
	// 1, 2 or 5 × 10^k (1 when nothing was counted).
	Max int
	// Since is when this process began counting, when that is inside the
	// window (the minutes before it are shaded, SinceW px from PlotLeft:
	// not counted, rather than none); zero otherwise.
	Since  time.Time
	SinceW int
	Ticks  []chartTick
	// The geometry: the SVG's size, and the plot's place in it.
	Width, Height                              int
	PlotLeft, PlotTop, PlotWidth, PlotHeight   int
	PlotRight, PlotBottom, PlotMiddle, LabelsY int
}

// chartBar is one minute.
type chartBar struct {
	Minute            time.Time // its start
	Processed, Failed int
	X, W              int
	// The bars' tops and heights; a count above zero is at least 1px high.
	ProcessedY, ProcessedH int
	FailedY, FailedH       int
}

// chartTick is a label under the x axis.
type chartTick struct {
	X      int
	Minute time.Time
}

// The chart's geometry, in px: 10 per minute, 8 of them the bar.
const (
	chartBarStep   = 10
	chartBarWidth  = 8
	chartLeft      = 44 // room for the y labels
	chartTop       = 8
	chartPlotH     = 120
	chartLabelRoom = 22 // under the plot, for the x labels
	chartRightRoom = 24 // right of it, for half of the last x label
)

// newChart lays out t's counts up to now.
func newChart(t *Throughput, now time.Time) chart {
	counts, started := t.minuteCounts(now)
	c := chart{
		PlotLeft: chartLeft, PlotTop: chartTop, PlotWidth: throughputMinutes * chartBarStep, PlotHeight: chartPlotH,
	}
	c.PlotRight, c.PlotBottom = c.PlotLeft+c.PlotWidth, c.PlotTop+c.PlotHeight
	c.PlotMiddle, c.LabelsY = c.PlotTop+c.PlotHeight/2, c.PlotBottom+16
	c.Width, c.Height = c.PlotRight+chartRightRoom, c.PlotBottom+chartLabelRoom
	largest := 0
	for _, m := range counts {
		c.Processed += m.processed
		c.Failed += m.failed
		largest = max(largest, m.processed, m.failed)
	}
	c.Max = niceCeil(largest)
	height := func(n int) int {
		if n == 0 {
			return 0
		}
		return max(1, int(math.Round(float64(n)*float64(c.PlotHeight)/float64(c.Max))))
	}
	for i, m := range counts {
		b := chartBar{Minute: time.Unix(m.minute*60, 0).UTC(), Processed: m.processed, Failed: m.failed,
			X: c.PlotLeft + i*chartBarStep + (chartBarStep-chartBarWidth)/2, W: chartBarWidth,
			ProcessedH: height(m.processed), FailedH: height(m.failed)}
		b.ProcessedY, b.FailedY = c.PlotBottom-b.ProcessedH, c.PlotBottom-b.FailedH
		c.Bars = append(c.Bars, b)
		if i%15 == 0 || i == len(counts)-1 {
			c.Ticks = append(c.Ticks, chartTick{X: c.PlotLeft + i*chartBarStep + chartBarStep/2, Minute: b.Minute})
		}
	}
	if first := c.Bars[0].Minute; started.After(first) {
		// The minute it started in is counted (in part): shade the ones before.
		i := int(started.Sub(first) / time.Minute)
		c.Since, c.SinceW = started, i*chartBarStep
	}
	return c
}

// niceCeil is the least of 1, 2, 5, 10, 20, 50... that is ≥ n.
func niceCeil(n int) int {
	for p := 1; p <= math.MaxInt/50; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
	}
	return n
}
