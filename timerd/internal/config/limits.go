package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Flow is the flow control of callbacks per origin (durable.Flow keyed by
// durable.HTTPOrigin): README.md, "Flow control".
type Flow struct {
	Default durable.Limit
	// Origins are the per-origin overrides of -origin-limits, by origin as
	// durable.Origin spells it.
	Origins map[string]durable.Limit
	Breaker durable.Breaker
}

// The flow control rows of README.md's configuration table, after the
// others (settings.go): if a row changes there, change it here.
var flowSettings = []setting{
	{name: "origin-concurrency", env: "TIMERD_ORIGIN_CONCURRENCY", def: "16",
		usage: "callbacks in flight per origin per process; 0: no limit",
		apply: func(c *Config, v string) (err error) {
			c.Flow.Default.Concurrency, err = parseInt(v, 0, math.MaxInt32)
			return err
		}},
	{name: "origin-rate", env: "TIMERD_ORIGIN_RATE", def: "0",
		usage: "callbacks started per second per origin per process; 0: no limit",
		apply: func(c *Config, v string) (err error) { c.Flow.Default.Rate, err = parseRate(v); return err }},
	{name: "origin-burst", env: "TIMERD_ORIGIN_BURST", def: "0",
		usage: "callbacks an origin may get at once at -origin-rate after an idle spell; 0: 1",
		apply: func(c *Config, v string) (err error) {
			c.Flow.Default.Burst, err = parseInt(v, 0, math.MaxInt32)
			return err
		}},
	{name: "origin-limits", env: "TIMERD_ORIGIN_LIMITS",
		usage: "per-origin limits: ORIGIN=concurrency:N,rate:R,burst:B;... (fields left out: no limit)",
		apply: func(c *Config, v string) (err error) { c.Flow.Origins, err = ParseOriginLimits(v); return err }},
	{name: "breaker-failures", env: "TIMERD_BREAKER_FAILURES", def: "5",
		usage: "failed callbacks in a row that stop an origin's callbacks for -breaker-cooldown; 0: never",
		apply: func(c *Config, v string) (err error) {
			c.Flow.Breaker.Failures, err = parseInt(v, 0, math.MaxInt32)
			return err
		}},
	{name: "breaker-cooldown", env: "TIMERD_BREAKER_COOLDOWN", def: "30s",
		usage: "how long an origin's breaker stays open before a probe (doubling to 10m while probes fail)",
		apply: func(c *Config, v string) (err error) {
			c.Flow.Breaker.CoolDown, err = parseDuration(v, time.Millisecond)
			c.Flow.Breaker.MaxCoolDown = max(durable.DefaultMaxCoolDown, c.Flow.Breaker.CoolDown)
			return err
		}},
}

func init() { settings = append(settings, flowSettings...) }

func parseRate(v string) (float64, error) {
	r, err := strconv.ParseFloat(v, 64)
	if err != nil || r < 0 || r > 1e9 || math.IsNaN(r) {
		return 0, errors.New("want a number of callbacks per second, 0..1e9")
	}
	return r, nil
}

// ParseOriginLimits reads -origin-limits: entries separated by ';', each an
// origin (or any http(s) URL of it), '=', and comma-separated
// concurrency:N, rate:R, burst:B, as durable.Limit.String writes them.
// The API's PUT /v1/limits/{origin} takes the same fields as JSON.
func ParseOriginLimits(v string) (map[string]durable.Limit, error) {
	out := map[string]durable.Limit{}
	for _, entry := range strings.Split(v, ";") {
		if entry = strings.TrimSpace(entry); entry == "" {
			continue
		}
		u, fields, ok := strings.Cut(entry, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want ORIGIN=concurrency:N,rate:R,burst:B", entry)
		}
		origin, err := durable.Origin(strings.TrimSpace(u))
		if err != nil {
			return nil, fmt.Errorf("%q: want an http or https origin", u)
		}
		var l durable.Limit
		for _, f := range strings.Split(fields, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(f), ":")
			switch name {
			case "concurrency":
				l.Concurrency, err = parseInt(val, 0, math.MaxInt32)
			case "rate":
				l.Rate, err = parseRate(val)
			case "burst":
				l.Burst, err = parseInt(val, 0, math.MaxInt32)
			default:
				err = errors.New("want concurrency, rate or burst")
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %w", origin, f, err)
			}
		}
		out[origin] = l
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
