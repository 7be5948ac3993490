package server

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
)

// The Redis tests need a server: TIMERD_REDIS_ADDR, else REDISWHEEL_ADDR
// (scripts/redis.sh's .redis/env sets it). Without one they are skipped,
// unless TIMERD_REQUIRE=1, when they fail.
func TestMain(m *testing.M) {
	// Some tests dial a closed port on purpose: go-redis's log of it is
	// held, and goleak ignores the goroutine it keeps probing the address.
	goleak.VerifyTestMain(redistest.HoldRedisLog(m), redistest.IgnoreTryDial)
}

func redisAddr(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"TIMERD_REDIS_ADDR", "REDISWHEEL_ADDR"} {
		if v := os.Getenv(name); v != "" {
			return v
		}
	}
	if os.Getenv("TIMERD_REQUIRE") == "1" {
		t.Fatal("no Redis (TIMERD_REDIS_ADDR or REDISWHEEL_ADDR) and TIMERD_REQUIRE=1")
	}
	t.Skip("no Redis: set REDISWHEEL_ADDR (scripts/redis.sh up && . .redis/env)")
	return ""
}
