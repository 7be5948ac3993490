package dashboard

import (
	"net/http"

	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
)

// pauseForm is GET /ui/pause: the confirmation of Pause.
func (d *dashboard) pauseForm(w http.ResponseWriter, r *http.Request) {
	d.confirm(w, r, "Pause deliveries", confirmData{
		Question: "Pause deliveries on every shard of " + d.Namespace + "?",
		Explain: "No worker of any timerd process starts a task until Resume; deliveries running now finish. " +
			"Adding, cancelling and requeueing go on, so a backlog builds up, and the times of " +
			"periodic schedules keep being added: they run at Resume.",
		Action: "/ui/pause", Button: "Pause", Back: "/ui/",
	})
}

// resumeForm is GET /ui/resume: the confirmation of Resume.
func (d *dashboard) resumeForm(w http.ResponseWriter, r *http.Request) {
	d.confirm(w, r, "Resume deliveries", confirmData{
		Question: "Resume deliveries on every shard of " + d.Namespace + "?",
		Explain:  "Workers claim again at once; every task that fell due while paused is due now.",
		Action:   "/ui/resume", Button: "Resume", Back: "/ui/",
	})
}

// pause is POST /ui/pause (confirm=yes): Queue.Pause, then the overview.
func (d *dashboard) pause(w http.ResponseWriter, r *http.Request) {
	if !d.confirmed(w, r) {
		return
	}
	if err := d.Queue.Pause(r.Context()); err != nil {
		d.failStore(w, r, "Pause", err)
		return
	}
	auth.Audit(r.Context(), d.Log, "dashboard Pause", "remote", r.RemoteAddr)
	http.Redirect(w, r, "/ui/?done=paused", http.StatusSeeOther)
}

// resume is POST /ui/resume (confirm=yes): Queue.Resume, then the overview.
func (d *dashboard) resume(w http.ResponseWriter, r *http.Request) {
	if !d.confirmed(w, r) {
		return
	}
	if err := d.Queue.Resume(r.Context()); err != nil {
		d.failStore(w, r, "Resume", err)
		return
	}
	auth.Audit(r.Context(), d.Log, "dashboard Resume", "remote", r.RemoteAddr)
	http.Redirect(w, r, "/ui/?done=resumed", http.StatusSeeOther)
}
