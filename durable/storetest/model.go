package storetest

import "github.com/go-timingwheel/timingwheel/durable"

// model is the reference the randomized test holds a store to: what each
// key's task should be after each call, written as plainly as the contract
// reads (durable/store.go). It knows no clock: a time the store chose is
// either "now" (due by the next claim) or at least a bound; the test keeps
// every other time far in the past or the future.
type model struct {
	tasks      map[string]*modelTask
	retention  bool // Limits.Retention > 0: finished tasks are kept
	historyLen int  // Limits.HistoryLen
	paused     bool
}

// modelTask is one key's task in the model.
type modelTask struct {
	state         durable.State // scheduled or retrying by retrying(); in flight; dead; done; cancelled
	due           dueTime       // while due
	size          int
	attempts      int
	postponements int
	lastErr       string
	token         string   // in flight: the current delivery's
	part          int      // in flight: the partition that leased it
	cancelled     bool     // in flight: Cancel came
	history       []string // the outcomes of its last deliveries, oldest first
}

// dueTime is a due time as the model knows it: exact (Add, Reschedule), or
// set by the store's clock: "now" (due at once) or at least after.
type dueTime struct {
	exact int64 // Unix ms, if known
	now   bool  // the store's now when it was set: due by any later claim
	after int64 // the store's now plus a delay, at least this
}

// claimable reports whether a claim at store time past any test time leases
// a task due at d (the test's exact times are an hour ago or tomorrow).
func (d dueTime) claimable(testNow int64) bool {
	return d.now || d.exact != 0 && d.exact <= testNow
}

// inDue reports whether the task is in the due set: scheduled or retrying.
func (t *modelTask) inDue() bool {
	return t.state == durable.StateScheduled || t.state == durable.StateRetrying
}

// setDue puts t in the due set at d, scheduled or retrying by its record.
func (t *modelTask) setDue(d dueTime) {
	t.due = d
	t.state = durable.StateScheduled
	if t.attempts > 0 || t.lastErr != "" {
		t.state = durable.StateRetrying
	}
}

// add applies an Add or Replace of key, due at at, and returns its status.
func (m *model) add(key string, size int, at dueTime, replace bool) durable.AddStatus {
	t := m.tasks[key]
	switch {
	case t != nil && !replace:
		return durable.AddExists
	case t != nil && t.state == durable.StateInFlight:
		return durable.AddInFlight
	}
	t = &modelTask{size: size}
	t.setDue(at)
	m.tasks[key] = t
	return durable.AddStored
}

// claim leases key's task (claimable, the claim said so) with token.
func (m *model) claim(key, token string, part int) {
	t := m.tasks[key]
	t.state, t.token, t.part = durable.StateInFlight, token, part
	t.attempts++
}

// finish ends t as state: kept with retention, else forgotten. A done task's
// last error is cleared.
func (m *model) finish(key string, state durable.State) {
	if !m.retention {
		delete(m.tasks, key)
		return
	}
	t := m.tasks[key]
	t.state, t.token, t.cancelled, t.due = state, "", false, dueTime{}
	if state == durable.StateDone {
		t.lastErr = ""
	}
}

// settle records o (its Delay 0 or a day at least) and returns its code.
func (m *model) settle(o durable.Outcome, bound int64) durable.SettleCode {
	t := m.tasks[o.Key]
	if t == nil || t.state != durable.StateInFlight || t.token != o.Token {
		return durable.SettleRejected
	}
	t.token = ""
	outcome := string(o.Kind)
	if t.cancelled {
		outcome = string(durable.StateCancelled)
	}
	// A finished task without retention leaves no history to read.
	if m.retention || (outcome != string(durable.OutcomeDone) && outcome != string(durable.StateCancelled)) {
		t.history = append(t.history, outcome)
		if over := len(t.history) - m.historyLen; over > 0 {
			t.history = t.history[over:]
		}
	}
	due := dueTime{now: true}
	if o.Delay > 0 {
		due = dueTime{after: bound + o.Delay}
	}
	switch {
	case t.cancelled:
		m.finish(o.Key, durable.StateCancelled)
		return durable.SettleCancelled
	case o.Kind == durable.OutcomeDone:
		m.finish(o.Key, durable.StateDone)
		return durable.SettleDone
	case o.Kind == durable.OutcomeDead:
		t.state, t.lastErr = durable.StateDead, o.Err
		return durable.SettleDead
	case o.Kind == durable.OutcomeRetry:
		t.lastErr, t.postponements = o.Err, 0
		t.setDue(due)
		return durable.SettleRetry
	case o.Kind == durable.OutcomeRelease:
		t.attempts--
		t.setDue(dueTime{now: true})
		return durable.SettleReleased
	}
	t.attempts--
	t.postponements++
	t.lastErr = o.Err
	t.setDue(due)
	return durable.SettlePostponed
}

// extend is Extend's code for key with token.
func (m *model) extend(key, token string) durable.ExtendCode {
	t := m.tasks[key]
	switch {
	case t == nil || t.state != durable.StateInFlight || t.token != token:
		return durable.ExtendLost
	case t.cancelled:
		return durable.ExtendCancelled
	}
	return durable.ExtendOK
}

// cancel applies Cancel of key and returns Found.
func (m *model) cancel(key string) bool {
	t := m.tasks[key]
	switch {
	case t == nil:
		return false
	case t.inDue() || t.state == durable.StateDead:
		m.finish(key, durable.StateCancelled)
	case t.state == durable.StateInFlight:
		t.cancelled = true
	default: // retained
		delete(m.tasks, key)
	}
	return true
}

// reschedule applies Reschedule of key to at.
func (m *model) reschedule(key string, at int64) durable.RescheduleResult {
	t := m.tasks[key]
	switch {
	case t == nil:
		return durable.RescheduleMissing
	case t.state == durable.StateInFlight:
		return durable.RescheduleInFlight
	case !t.inDue():
		return durable.RescheduleMissing
	}
	t.due = dueTime{exact: at}
	return durable.RescheduleMoved
}

// requeue applies Requeue of key.
func (m *model) requeue(key string) bool {
	t := m.tasks[key]
	if t == nil || t.state != durable.StateDead {
		return false
	}
	t.attempts, t.postponements = 0, 0
	t.setDue(dueTime{now: true})
	return true
}

// counts are the model's tasks per state.
func (m *model) counts() durable.StateCounts {
	var c durable.StateCounts
	for _, t := range m.tasks {
		switch t.state {
		case durable.StateScheduled:
			c.Scheduled++
		case durable.StateRetrying:
			c.Retrying++
		case durable.StateInFlight:
			c.InFlight++
		case durable.StateDead:
			c.Dead++
		case durable.StateDone:
			c.Done++
		case durable.StateCancelled:
			c.Cancelled++
		}
	}
	return c
}
