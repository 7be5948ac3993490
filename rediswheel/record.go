package rediswheel

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// The task record is the ctl field m|<key>, written by lua/add.lua at every
// Add and Replace, read by lua/claim.lua (the task's own max attempts) and
// returned by claim for the Go side to parse here:
//
//	<added ms>|<original due ms>|<payload bytes>|<timeout ms>|<max attempts>|<backoff base ms>|<backoff limit ms>|<type>
//
// Decimal integers, 0 meaning "not set, the Queue's"; the type comes last
// because it may contain '|'. A task stored before records existed has none
// and reads as all zero. If this changes, adjust lua/add.lua and lua/claim.lua
// (and the readers of m| in get.lua and list.lua).
type taskRecord struct {
	added, originalDue int64 // Unix ms, by the Redis clock
	payloadSize        int64
	policy             durable.Policy
}

// maxPolicyMs caps a record's durations: durable's longest policy duration,
// math.MaxInt64 ns, in whole ms.
const maxPolicyMs = math.MaxInt64 / int64(time.Millisecond)

// recordFields is the number of '|'-separated fields of a record.
const recordFields = 8

// noPolicy is the policy argument of a task added with no TaskOption (most
// are), so that they cost no formatting.
const noPolicy = "0|0|0|0|"

// encodePolicy is the tail of a record, from <timeout ms> to <type>, as Go
// sends it to add.lua; the script prepends the fields only it knows.
func encodePolicy(p durable.Policy) string {
	if p == (durable.Policy{}) {
		return noPolicy
	}
	b := make([]byte, 0, 32+len(p.Type))
	b = strconv.AppendInt(b, durationMilliCeil(p.Timeout), 10)
	b = append(b, '|')
	b = strconv.AppendInt(b, int64(p.MaxAttempts), 10)
	b = append(b, '|')
	b = strconv.AppendInt(b, durationMilliCeil(p.BackoffBase), 10)
	b = append(b, '|')
	b = strconv.AppendInt(b, durationMilliCeil(p.BackoffLimit), 10)
	b = append(b, '|')
	return string(append(b, p.Type...))
}

// parseRecord reads a record; "" (no record) is the zero record.
func parseRecord(s string) (taskRecord, error) {
	var r taskRecord
	if s == "" {
		return r, nil
	}
	f := strings.SplitN(s, "|", recordFields)
	if len(f) != recordFields {
		return r, fmt.Errorf("task record %q: %d fields, want %d", s, len(f), recordFields)
	}
	var n [recordFields - 1]int64
	for i := range n {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil || v < 0 || (i >= 3 && i != 4 && v > maxPolicyMs) {
			return r, fmt.Errorf("task record %q: field %d is not a count", s, i+1)
		}
		n[i] = v
	}
	r.added, r.originalDue, r.payloadSize = n[0], n[1], n[2]
	r.policy = durable.Policy{
		Type:         f[7],
		Timeout:      time.Duration(n[3]) * time.Millisecond,
		MaxAttempts:  int(n[4]),
		BackoffBase:  time.Duration(n[5]) * time.Millisecond,
		BackoffLimit: time.Duration(n[6]) * time.Millisecond,
	}
	return r, nil
}
