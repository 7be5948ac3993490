package durable

import (
	"context"
	"time"
)

// claimed is one Store.Claim as the worker uses it.
type claimed struct {
	now     int64     // the store's time, ms
	next    int64     // earliest due time (none while paused) or lease deadline left, ms; -1 if none
	at      time.Time // local time the reply arrived
	trimmed int       // dead tasks dropped over MaxDead by this call's reaping
	paused  bool      // the partition is paused (Pause): nothing was leased
	tasks   []*delivery
}

// maxUnconfirmed bounds the claims in a row of one task whose leases expire
// with no heartbeat or settle ever confirming that a worker got them; such a
// claim may be a lost reply, with no handler run, so its attempt is not
// counted (Store.Claim, lua/claim.lua on Redis). Past the bound they count
// again, so a task whose every delivery crashes its worker before the first
// heartbeat (Lease/3) still dies, after at most maxUnconfirmed more
// deliveries than its max attempts. Three absorbs a lost reply or two (a
// read timeout, a failover) without letting a crash loop run much longer.
const maxUnconfirmed = 3

// claim leases up to limit due tasks of partition for lease, after reaping
// expired leases there.
func (q *Queue) claim(ctx context.Context, partition, limit int, lease time.Duration) (claimed, error) {
	c, err := q.store.Claim(ctx, partition, limit, lease, q.limits)
	if err != nil {
		return claimed{}, err
	}
	out := claimed{at: time.Now(), now: c.Now, next: c.Next, trimmed: c.DeadTrimmed, paused: c.Paused}
	out.tasks = make([]*delivery, len(c.Tasks))
	for i, t := range c.Tasks {
		out.tasks[i] = &delivery{partition: partition, token: t.Token, policy: t.Policy, postponements: t.Postponements, claimedAt: out.at, task: Task{
			Key: t.Key, Payload: t.Payload, Attempt: t.Attempt, Due: time.UnixMilli(t.Due),
			OriginalDue: time.UnixMilli(t.OriginalDue), Type: t.Policy.Type,
		}}
	}
	return out, nil
}
