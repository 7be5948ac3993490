package dashboard

import (
	"strings"

	"github.com/go-timingwheel/timingwheel/rediswheel"
)

// states are the task states a list can show, in their life's order.
var states = []rediswheel.State{
	rediswheel.StateScheduled, rediswheel.StateRetrying, rediswheel.StateInFlight,
	rediswheel.StateDead, rediswheel.StateDone, rediswheel.StateCancelled,
}

// stateSlug is s as the /v1/ API and our URLs spell it: "in_flight" for
// rediswheel's "in flight".
func stateSlug(s rediswheel.State) string { return strings.ReplaceAll(string(s), " ", "_") }

// parseState is the State a slug names, and false for anything else.
func parseState(slug string) (rediswheel.State, bool) {
	for _, s := range states {
		if stateSlug(s) == slug {
			return s, true
		}
	}
	return "", false
}
