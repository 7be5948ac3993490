package dashboard

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// clock is a settable now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// chartStart is a minute boundary: the tests' fake now.
var chartStart = time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)

// finished reports n handler returns of outcome to t.
func finished(t *Throughput, outcome string, n int) {
	for range n {
		t.HandlerFinished(durable.FinishEvent{Outcome: outcome})
	}
}

// What counts: a delivery whose attempt counts is processed (done, retry,
// dead, detach), failed when it retried or died, and a completion that
// made its task retry or die is failed; postponements, releases and
// successful completions count nothing.
func TestThroughputCounts(t *testing.T) {
	c := &clock{t: chartStart}
	tp := NewThroughput(c.now)
	for _, o := range []string{"done", "detach", "retry", "dead", "later", "release"} {
		finished(tp, o, 1)
	}
	for _, code := range []durable.SettleCode{durable.SettleDone, durable.SettleRetry, durable.SettleDead, durable.SettleCancelled, durable.SettlePostponed} {
		tp.Completed(durable.CompleteEvent{Key: "k", Code: code})
	}
	counts, _ := tp.minuteCounts(c.t)
	last := counts[throughputMinutes-1]
	if last.processed != 4 || last.failed != 4 {
		t.Errorf("this minute: %d processed, %d failed; want 4 and 4 (2 by the handler, 2 by Complete)", last.processed, last.failed)
	}

	// A minute later the counts are the previous bar's; an hour later they
	// have left the window, and the ring's slot, used again, starts at zero.
	c.t = c.t.Add(time.Minute)
	finished(tp, "done", 2)
	counts, _ = tp.minuteCounts(c.t)
	if got := [2]int{counts[throughputMinutes-2].processed, counts[throughputMinutes-1].processed}; got != [2]int{4, 2} {
		t.Errorf("the last two minutes: %v processed, want [4 2]", got)
	}
	c.t = chartStart.Add(throughputMinutes * time.Minute)
	finished(tp, "retry", 1)
	counts, _ = tp.minuteCounts(c.t)
	total := 0
	for _, m := range counts {
		total += m.processed
	}
	if total != 3 || counts[throughputMinutes-1].processed != 1 || counts[throughputMinutes-1].failed != 1 {
		t.Errorf("an hour on: %d processed in the window, this minute %+v; want 3 (2 from 59 minutes ago) and 1/1", total, counts[throughputMinutes-1])
	}
}

// The chart's data: 60 bars, oldest first, the y axis' top the largest
// minute rounded up to 1, 2 or 5 × 10^k, bars as high as their counts on
// that scale (a count above zero at least 1px), failed over processed from
// one baseline, and the minutes before the process started shaded.
func TestChartData(t *testing.T) {
	c := &clock{t: chartStart.Add(-20 * time.Minute)}
	tp := NewThroughput(c.now) // started 20 minutes before now
	c.t = chartStart.Add(-19 * time.Minute)
	finished(tp, "done", 7)
	finished(tp, "dead", 3)
	c.t = chartStart
	finished(tp, "done", 1)

	ch := newChart(tp, chartStart.Add(30*time.Second))
	if len(ch.Bars) != throughputMinutes {
		t.Fatalf("%d bars, want %d", len(ch.Bars), throughputMinutes)
	}
	if ch.Max != 10 || ch.Processed != 11 || ch.Failed != 3 {
		t.Errorf("max %d, totals %d/%d; want 10, 11 processed, 3 failed", ch.Max, ch.Processed, ch.Failed)
	}
	if first, last := ch.Bars[0].Minute, ch.Bars[throughputMinutes-1].Minute; !first.Equal(chartStart.Add(-59*time.Minute)) || !last.Equal(chartStart) {
		t.Errorf("bars from %v to %v, want the hour up to %v", first, last, chartStart)
	}
	storm := ch.Bars[40] // 19 minutes before the last
	if storm.Processed != 10 || storm.Failed != 3 || storm.ProcessedH != chartPlotH || storm.FailedH != 36 {
		t.Errorf("the storm's bar %+v: want 10 processed at full height (%d px), 3 failed at 36 px", storm, chartPlotH)
	}
	if storm.ProcessedY != ch.PlotTop || storm.FailedY+storm.FailedH != ch.PlotBottom {
		t.Errorf("the storm's bar %+v: want its top at the plot's (%d), its base at the axis (%d)", storm, ch.PlotTop, ch.PlotBottom)
	}
	if now := ch.Bars[throughputMinutes-1]; now.ProcessedH != 12 || now.FailedH != 0 {
		t.Errorf("the current minute's bar %+v: want 12 px processed, no failed", now)
	}
	if want := chartStart.Add(-20 * time.Minute); !ch.Since.Equal(want) || ch.SinceW != 39*chartBarStep {
		t.Errorf("since %v, shaded %d px; want %v and %d px (39 minutes before it)", ch.Since, ch.SinceW, want, 39*chartBarStep)
	}
	if ch.Bars[1].X-ch.Bars[0].X != chartBarStep || ch.Bars[throughputMinutes-1].X+chartBarWidth > ch.PlotRight {
		t.Errorf("bars every %d px, the last ending at %d; want %d px and within the plot (%d)", ch.Bars[1].X-ch.Bars[0].X,
			ch.Bars[throughputMinutes-1].X+chartBarWidth, chartBarStep, ch.PlotRight)
	}

	// One delivery among thousands is still a visible bar.
	c.t = chartStart.Add(-time.Minute)
	finished(tp, "done", 4000)
	ch = newChart(tp, chartStart)
	if ch.Max != 5000 || ch.Bars[throughputMinutes-1].ProcessedH != 1 {
		t.Errorf("max %d, a bar of 1: %d px; want 5000 and 1 px", ch.Max, ch.Bars[throughputMinutes-1].ProcessedH)
	}
	// A process that started over an hour ago shades nothing.
	if ch = newChart(NewThroughput(c.now), chartStart.Add(2*time.Hour)); !ch.Since.IsZero() || ch.SinceW != 0 || ch.Max != 1 {
		t.Errorf("an old, idle process: since %v, %d px shaded, max %d; want none, none, 1", ch.Since, ch.SinceW, ch.Max)
	}
}

func TestNiceCeil(t *testing.T) {
	for n, want := range map[int]int{0: 1, 1: 1, 2: 2, 3: 5, 5: 5, 6: 10, 11: 20, 101: 200, 4000: 5000} {
		if got := niceCeil(n); got != want {
			t.Errorf("niceCeil(%d) = %d, want %d", n, got, want)
		}
	}
}

// minuteRE is one minute's group in the overview's SVG and its bars.
var minuteRE = regexp.MustCompile(`<g class="minute" data-minute="(\d+)" data-processed="(\d+)" data-failed="(\d+)"><title>([^<]*)</title>` +
	`(?:<rect class="processed" x="\d+" y="\d+" width="\d+" height="(\d+)" fill="[^"]+"/>)?` +
	`(?:<rect class="failed" x="\d+" y="\d+" width="\d+" height="(\d+)" fill="[^"]+"/>)?</g>`)

// The overview draws the chart from the Throughput it is given: one group
// per minute with its counts and bars, the totals beside it; no chart
// without one.
func TestOverviewChart(t *testing.T) {
	q := newQueue(t, nil)
	now := time.Now()
	c := &clock{t: now.Add(-2 * time.Hour)}
	tp := NewThroughput(c.now)
	storm := now.Add(-30 * time.Minute)
	c.t = storm
	finished(tp, "dead", 29)
	finished(tp, "done", 21)
	tp.Completed(durable.CompleteEvent{Code: durable.SettleDead})

	r := get(t, newDashboardWith(t, Config{Queue: q, Throughput: tp}), "/ui/", true)
	groups := minuteRE.FindAllStringSubmatch(r.body, -1)
	if len(groups) != throughputMinutes {
		t.Fatalf("%d minute groups in the SVG, want %d:\n%s", len(groups), throughputMinutes, r.body)
	}
	found := false
	for _, g := range groups {
		if g[1] != strconv.FormatInt(storm.Unix()/60*60, 10) {
			if g[2] != "0" || g[3] != "0" || g[5] != "" || g[6] != "" {
				t.Errorf("a quiet minute drawn as %q", g[0])
			}
			continue
		}
		found = true
		if g[2] != "50" || g[3] != "30" || g[5] != strconv.Itoa(chartPlotH) || g[6] != "72" {
			t.Errorf("the storm's minute: %q; want 50 processed at %d px, 30 failed at 72 px", g[0], chartPlotH)
		}
		if want := storm.UTC().Format("15:04") + ": 50 processed, 30 failed"; g[4] != want {
			t.Errorf("its title %q, want %q", g[4], want)
		}
	}
	if !found {
		t.Errorf("no group for the storm's minute %d", storm.Unix()/60*60)
	}
	cells := cellsByID(r.body)
	if cells["throughput-processed"] != "50" || cells["throughput-failed"] != "30" || cells["throughput-max"] != "50" {
		t.Errorf("totals %q processed, %q failed, axis top %q; want 50, 30, 50", cells["throughput-processed"], cells["throughput-failed"], cells["throughput-max"])
	}

	r = get(t, newDashboardWith(t, Config{Queue: q}), "/ui/", true)
	mustNotContain(t, "the overview without a Throughput", r.body, `id="throughput"`)
}
