package config

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/durable"
)

// defaultFlow is the flow control with every flow setting at its default.
var defaultFlow = Flow{
	Default: durable.Limit{Concurrency: 16},
	Breaker: durable.Breaker{Failures: 5, CoolDown: 30 * time.Second, MaxCoolDown: 10 * time.Minute},
}

func TestFlowSettings(t *testing.T) {
	want := Flow{
		Default: durable.Limit{Concurrency: 4, Rate: 2.5, Burst: 3},
		Origins: map[string]durable.Limit{
			"https://api.example.com:443": {Concurrency: 1},
			"http://10.0.0.5:8080":        {Rate: 10, Burst: 20},
		},
		Breaker: durable.Breaker{Failures: 0, CoolDown: 20 * time.Minute, MaxCoolDown: 20 * time.Minute},
	}
	limits := "https://API.example.com/hooks=concurrency:1; http://10.0.0.5:8080=rate:10,burst:20"
	got, err := Parse([]string{"-origin-concurrency", "4", "-origin-rate", "2.5", "-origin-burst", "3",
		"-origin-limits", limits, "-breaker-failures", "0", "-breaker-cooldown", "20m"}, env(nil))
	require.NoError(t, err)
	require.Equal(t, want, got.Flow, "flags")
	got, err = Parse(nil, env(map[string]string{"TIMERD_ORIGIN_CONCURRENCY": "4", "TIMERD_ORIGIN_RATE": "2.5",
		"TIMERD_ORIGIN_BURST": "3", "TIMERD_ORIGIN_LIMITS": limits, "TIMERD_BREAKER_FAILURES": "0",
		"TIMERD_BREAKER_COOLDOWN": "20m"}))
	require.NoError(t, err)
	require.Equal(t, want, got.Flow, "environment")

	for _, args := range [][]string{
		{"-origin-concurrency", "-1"},
		{"-origin-rate", "NaN"},
		{"-origin-rate", "-1"},
		{"-origin-burst", "x"},
		{"-origin-limits", "https://a.example.com"},
		{"-origin-limits", "ftp://a.example.com=concurrency:1"},
		{"-origin-limits", "https://a.example.com=speed:1"},
		{"-origin-limits", "https://a.example.com=concurrency:-2"},
		{"-breaker-failures", "-1"},
		{"-breaker-cooldown", "0s"},
	} {
		_, err := Parse(args, env(nil))
		require.Error(t, err, args)
		require.Contains(t, err.Error(), args[0], "the error names the flag")
		require.Contains(t, err.Error(), strings.ToUpper(strings.ReplaceAll("timerd_"+args[0][1:], "-", "_")), "and its variable")
	}
}
