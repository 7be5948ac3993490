package dashboard

import (
	"strings"

	"github.com/go-timingwheel/timingwheel/durable"
)

// states are the task states a list can show, in their life's order.
var states = []durable.State{
	durable.StateScheduled, durable.StateRetrying, durable.StateInFlight,
	durable.StateDead, durable.StateDone, durable.StateCancelled,
}

// stateSlug is s as the /v1/ API and our URLs spell it: "in_flight" for
// durable's "in flight".
func stateSlug(s durable.State) string { return strings.ReplaceAll(string(s), " ", "_") }

// parseState is the State a slug names, and false for anything else.
func parseState(slug string) (durable.State, bool) {
	for _, s := range states {
		if stateSlug(s) == slug {
			return s, true
		}
	}
	return "", false
}
