package delayqueue

import "time"

// funcAlarm is the alarm of a ringing queue (see Ring): one runtime timer
// that calls its function, as time.AfterFunc does, reset in place for every
// setting, so that the queue allocates no runtime timer after its first. Its
// methods are called with the queue's lock held. The queue only moves it
// earlier, or sets it again after it rang (see lazy.go).
type funcAlarm struct {
	t *time.Timer // nil until the first Set
	f func()
}

func (a *funcAlarm) C() <-chan time.Time { return nil }

func (a *funcAlarm) Set(deadline time.Time) {
	if a.t == nil {
		a.t = time.AfterFunc(time.Until(deadline), a.f)
	} else {
		a.t.Reset(time.Until(deadline))
	}
}

func (a *funcAlarm) Stop() {
	if a.t != nil {
		a.t.Stop()
	}
}
