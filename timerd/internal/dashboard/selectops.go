package dashboard

import (
	"context"
	"errors"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// The actions on a selection (select.go): what each does to one task, and
// which a list of each state offers.

// selectOp is one action on a selection.
type selectOp struct {
	verb, past string // "Cancel", "Cancelled"
	explain    string
	needsDelay bool // reschedule: the form's delay
	// do acts on one task of the list's state: whether it did.
	do func(d *dashboard, delay time.Duration) func(context.Context, string) (bool, error)
}

var selectOps = map[string]selectOp{
	"requeue": {"Requeue", "Requeued", "Each dead task becomes due now, its attempts reset.", false,
		func(d *dashboard, _ time.Duration) func(context.Context, string) (bool, error) {
			return d.Queue.Requeue
		}},
	"run-now": {"Run now", "Made due now", "Each becomes due now (its attempts kept); workers deliver it as soon as they can.", false,
		func(d *dashboard, _ time.Duration) func(context.Context, string) (bool, error) {
			return func(ctx context.Context, key string) (bool, error) { return d.reschedule(ctx, key, 0) }
		}},
	"reschedule": {"Reschedule", "Rescheduled", "Each becomes due that long from now (its attempts kept).", true,
		func(d *dashboard, delay time.Duration) func(context.Context, string) (bool, error) {
			return func(ctx context.Context, key string) (bool, error) { return d.reschedule(ctx, key, delay) }
		}},
	"cancel": {"Cancel", "Cancelled", "Each is cancelled: a pending or dead one at once, one in flight at the end of its delivery. This cannot be undone.", false,
		func(d *dashboard, _ time.Duration) func(context.Context, string) (bool, error) {
			return d.Queue.Cancel
		}},
}

// opsFor are the actions a list of state offers, in the order shown: what
// its tasks can be made to do (a dead task runs now by a requeue).
func opsFor(state durable.State) []string {
	switch state {
	case durable.StateScheduled, durable.StateRetrying:
		return []string{"run-now", "reschedule", "cancel"}
	case durable.StateDead:
		return []string{"requeue", "cancel"}
	case durable.StateInFlight:
		return []string{"cancel"}
	}
	return nil // done, cancelled: nothing left to do to them
}

// opChoice is an action as the list's menu offers it.
type opChoice struct{ Op, Verb string }

// choices are opsFor(state) for the menu, and whether one needs a delay.
func choices(state durable.State) (cs []opChoice, delay bool) {
	for _, op := range opsFor(state) {
		cs = append(cs, opChoice{op, selectOps[op].verb})
		delay = delay || selectOps[op].needsDelay
	}
	return cs, delay
}

// reschedule moves a pending task to now+delay; a task in flight (it
// started meanwhile) is not moved.
func (d *dashboard) reschedule(ctx context.Context, key string, delay time.Duration) (bool, error) {
	ok, err := d.Queue.Reschedule(ctx, key, d.now().Add(delay))
	if errors.Is(err, durable.ErrInFlight) {
		return false, nil
	}
	return ok, err
}

// maxDelay bounds a reschedule's delay: a year, past which a typo is
// likelier than a plan.
const maxDelay = 366 * 24 * time.Hour
