package dashboard

import (
	"net/http"

	"github.com/go-timingwheel/timingwheel/durable"
)

type overviewData struct {
	Stats   durable.Stats
	States  []durable.State
	Outcome *outcome // of Pause or Resume
	// Origins are the callback origins this process's workers hold
	// (origins.go); nil without a Flow, when the section is left out.
	Origins []origin
	HasFlow bool
	// Chart is this process's deliveries per minute (chart.go); nil
	// without a Config.Throughput, when the section is left out.
	Chart *chart
}

// overview shows the deliveries of the last hour, processed and failed per
// minute, as this process counted them (Throughput: a chart, as asynqmon
// users look for first), then the Queue's Stats as they are: per partition and in total, the
// tasks due now, scheduled later (retries waiting included), in flight,
// dead and retained; whether claims are paused; and the lateness, Stats'
// OldestDue: how long the oldest due task has waited past its due time (0
// when nothing is due; in the total, the largest of the shards'). That is
// the wait a task becoming due now would see, not a delivery percentile:
// durable keeps none (durablemetrics exports the same OldestDue as a gauge).
//
// It shows the counts per state first (Stats' States, as the lists count
// them, each linking to its list), then the counts by place: due and
// scheduled together are the scheduled and retrying states, retained is
// done and cancelled.
func (d *dashboard) overview(w http.ResponseWriter, r *http.Request) {
	st, err := d.Queue.Stats(r.Context())
	if err != nil {
		d.failStore(w, r, "Stats", err)
		return
	}
	data := overviewData{Stats: st, States: states, Outcome: outcomeOf(r), Origins: d.origins(), HasFlow: d.Flow != nil}
	if d.Throughput != nil {
		c := newChart(d.Throughput, d.now())
		data.Chart = &c
	}
	d.render(w, r, http.StatusOK, "overview", "Overview", data)
}
