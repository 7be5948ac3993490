package main

import (
	"fmt"
	"slices"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestClientSeedsDiffer: the clients of a round, and of different rounds,
// get different seeds, a client is given its seed, and different seeds
// give connection i a different phase, so that no two servers' requests
// arrive in lockstep.
func TestClientSeedsDiffer(t *testing.T) {
	seen := map[uint64]bool{}
	for round := 1; round <= 20; round++ {
		for i := range 3 {
			s := clientSeed(round, i)
			if seen[s] {
				t.Fatalf("round %d, client %d: seed %d given twice", round, i, s)
			}
			seen[s] = true
		}
	}
	args := clientArgs(config{}, "127.0.0.1:1", 30, clientSeed(2, 1))
	if i := slices.Index(args, "-seed"); i < 0 || i+1 == len(args) || args[i+1] != fmt.Sprint(clientSeed(2, 1)) {
		t.Errorf("a client's arguments %q do not pass its seed %d", args, clientSeed(2, 1))
	}
	same := 0
	for i := range 300 {
		a := connRand(i, clientSeed(1, 0)).Int64N(1e9)
		b := connRand(i, clientSeed(1, 1)).Int64N(1e9)
		if a == b {
			same++
		}
	}
	if same > 0 {
		t.Errorf("%d of 300 connections have the same phase in two clients of a round", same)
	}
}
