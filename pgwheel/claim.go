package pgwheel

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/jackc/pgx/v5"
)

// Claim is durable.Store's Claim, on the one partition (0); an error
// retrying will not heal (see unrecoverable) wraps durable.ErrUnrecoverable.
func (s *Store) Claim(ctx context.Context, partition, limit int, lease time.Duration, lim durable.Limits) (durable.Claimed, error) {
	c, err := s.claim(ctx, claimParams{
		Limit: limit, Lease: lease, MaxAttempts: lim.MaxAttempts, ReapLimit: lim.ReapBatch,
		DeadCap: lim.MaxDead, HistoryLen: lim.HistoryLen, WorkerID: lim.WorkerID,
		UnconfirmedBound: lim.MaxUnconfirmed, Retention: lim.Retention,
	})
	if err != nil {
		return durable.Claimed{}, unavailable(unrecoverable(err))
	}
	out := durable.Claimed{Now: c.Now.UnixMilli(), Next: millisOf(c.Next), DeadTrimmed: c.DeadTrimmed, Paused: c.Paused,
		Tasks: make([]durable.ClaimedTask, len(c.Tasks))}
	for i, t := range c.Tasks {
		out.Tasks[i] = durable.ClaimedTask{Key: t.Key, Payload: t.Payload, Attempt: t.Attempt, Due: t.Due.UnixMilli(),
			OriginalDue: t.OriginalDue.UnixMilli(), Token: strconv.FormatInt(t.Token, 10), Policy: t.Policy,
			Postponements: t.Postponements}
	}
	return out, nil
}

// claimParams are a claim's settings: the worker's and queue's options, as
// rediswheel's claim script receives them.
type claimParams struct {
	Limit       int           // most due tasks to lease (>= 0)
	Lease       time.Duration // lease length (> 0)
	MaxAttempts int           // the queue's; a task's own Policy.MaxAttempts wins
	ReapLimit   int           // most expired leases to reap first (>= 0)
	DeadCap     int           // MaxDead: the dead set's size past which the oldest go
	HistoryLen  int           // deliveries kept in each task's log
	WorkerID    string        // recorded with each delivery
	// UnconfirmedBound is how many claims in a row may expire unconfirmed
	// (no Extend or Settle reached the database: maybe a lost reply) and
	// have their attempt given back.
	UnconfirmedBound int
	Retention        time.Duration // how long a finished task is kept (0: forgotten at once)
}

// claimed is a claim's result.
type claimed struct {
	Now time.Time // the database clock the claim used
	// Next is the earliest due time (none while paused) or lease deadline
	// left in the namespace after the claim; zero when there is none; Now
	// when the claim leased its whole Limit.
	Next        time.Time
	DeadTrimmed int  // dead tasks forgotten past DeadCap
	Paused      bool // the namespace is paused: nothing was leased
	Tasks       []claimedTask
}

// claimedTask is one delivery: the task leased until claimed.Now + Lease
// (rounded up) under Token.
type claimedTask struct {
	Key         string
	Payload     []byte
	Attempt     int       // this delivery's number, from 1
	Due         time.Time // when it was due
	Token       int64     // the fencing token Extend and Settle must present
	Policy      durable.Policy
	Added       time.Time
	OriginalDue time.Time
	// Postponements counts its laters in a row before this delivery.
	Postponements int
}

// claim reaps up to ReapLimit expired leases, then, unless the namespace is
// paused, leases up to Limit due tasks, earliest first, each with a fresh
// fencing token, all in one transaction.
//
// Never early: a task is leased only when its due time is at or before the
// database clock read at the start of the claim. Rows other transactions
// hold locked are skipped (FOR UPDATE SKIP LOCKED), so concurrent claimers
// never wait on each other and never lease one task twice; a task added in
// a transaction not yet committed is invisible.
//
// A lease that ran out means its worker died or stalled, or that the
// claim's reply never reached it: the task goes back to due at once with
// last error "lease expired" (to dead when out of attempts; finished as
// cancelled when Cancel came meanwhile), its token dropped so that the late
// worker's Settle and Extend are refused. Its attempt is given back when no
// Extend or Settle confirmed the claim, for up to UnconfirmedBound claims in
// a row (lua/claim.lua's rule).
func (s *Store) claim(ctx context.Context, p claimParams) (claimed, error) {
	if p.Limit < 0 || p.Lease <= 0 || p.ReapLimit < 0 || p.DeadCap < 0 || p.HistoryLen < 0 ||
		p.UnconfirmedBound < 0 || p.MaxAttempts < 0 || p.Retention < 0 {
		return claimed{}, fmt.Errorf("%w: claim %+v", ErrArgument, p)
	}
	worker := storableText(p.WorkerID)
	var out claimed
	err := s.inRunTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		out = claimed{}
		c, exp, err := s.expired(ctx, tx, p, &out.Paused)
		if err != nil {
			return fmt.Errorf("reap: %w", err)
		}
		out.Now = c.now
		buried, err := s.reap(ctx, tx, c, p, exp)
		if err != nil {
			return fmt.Errorf("reap: %w", err)
		}
		if !out.Paused && p.Limit > 0 {
			if out.Tasks, err = s.lease(ctx, tx, c, p, worker); err != nil {
				return fmt.Errorf("lease: %w", err)
			}
			s.countLeased(len(out.Tasks), len(out.Tasks) < p.Limit) // upkeep.go
		}
		if buried > 0 {
			if out.DeadTrimmed, err = s.trimDead(ctx, tx, p.DeadCap, trimDeadLimit*buried); err != nil {
				return fmt.Errorf("trim dead: %w", err)
			}
		}
		if p.Limit > 0 && len(out.Tasks) == p.Limit {
			// More may be due, and the worker claims again at once: Next is
			// now (see durable.Store's Claim), without the query below,
			// whose scan walks the index entries every lease leaves behind.
			out.Next = c.now
			return nil
		}
		// While paused, due tasks are not waited for: the worker polls at
		// its idle pace until Resume (which notifies).
		var next int64
		if err := tx.QueryRow(ctx, nextDueSQL, s.namespace, out.Paused).Scan(&next); err != nil {
			return fmt.Errorf("next: %w", err)
		}
		out.Next = fromMillis(next)
		return nil
	})
	if err != nil {
		return claimed{}, fmt.Errorf("pgwheel: claim: %w", err)
	}
	return out, nil
}

// nextDueSQL is a claim's search for the next due time ($2: paused) or
// lease deadline in namespace $1. ORDER BY at LIMIT 1, not min(at): on
// statistics taken before the namespace held tasks (a bulk load, before
// autoanalyze), min(at) was planned as an aggregate over the namespace's
// whole due range, custom and generic plans alike (20,000 scheduled tasks:
// 752 buffers, against 7; TestNextDueIgnoresStatistics), while the
// ordered index scan that a LIMIT 1 needs has no cheaper rival.
var nextDueSQL = `SELECT ` + msOf(`least(
			(SELECT at FROM pgwheel_task WHERE namespace = $1 AND place = 'due' AND NOT $2 ORDER BY at LIMIT 1),
			(SELECT at FROM pgwheel_task WHERE namespace = $1 AND place = 'lease' ORDER BY at LIMIT 1))`)

// expired is a lease that ran out, locked by expiredSQL.
type expired struct {
	key                           string
	attempts, unconfirmed, ownMax int
	cancelled                     bool
	d                             delivering
}

// expiredSQL reads the clock and the pause flag, and locks up to $2
// expired leases, in one statement: a claim's first round trip. With no
// expired lease it returns the one row of the clock, its lease columns
// NULL.
const expiredSQL = `WITH c AS MATERIALIZED (
		SELECT now, now_up, coalesce((SELECT paused FROM pgwheel_queue WHERE namespace = $1), false) AS paused
		FROM pgwheel_clock())
	SELECT c.now, c.now_up, c.paused, e.key, e.attempts, e.unconfirmed, e.max_attempts, e.cancel_requested,
		e.delivery_attempt, e.worker, e.started
	FROM c LEFT JOIN LATERAL (
		SELECT key, attempts, unconfirmed, max_attempts, cancel_requested,
			coalesce(delivery_attempt, -1) AS delivery_attempt, coalesce(worker, '') AS worker,
			coalesce(started, 'epoch') AS started
		FROM pgwheel_task WHERE namespace = $1 AND place = 'lease' AND at <= c.now
		ORDER BY at, key LIMIT $2 FOR UPDATE SKIP LOCKED) e ON true`

// expired reads the clock and the pause flag (into paused), and locks up
// to p.ReapLimit expired leases.
func (s *Store) expired(ctx context.Context, tx pgx.Tx, p claimParams, paused *bool) (clock, []expired, error) {
	rows, err := tx.Query(ctx, expiredSQL, s.namespace, p.ReapLimit)
	if err != nil {
		return clock{}, nil, err
	}
	defer rows.Close()
	var c clock
	var exp []expired
	for rows.Next() {
		var key, worker *string
		var attempts, unconfirmed, ownMax, attempt *int
		var cancelled *bool
		var started *time.Time
		if err := rows.Scan(&c.now, &c.nowUp, paused, &key, &attempts, &unconfirmed, &ownMax, &cancelled,
			&attempt, &worker, &started); err != nil {
			return clock{}, nil, err
		}
		if key == nil {
			continue // no expired lease: the clock's row alone
		}
		exp = append(exp, expired{key: *key, attempts: *attempts, unconfirmed: *unconfirmed, ownMax: *ownMax,
			cancelled: *cancelled, d: delivering{attempt: *attempt, worker: *worker, started: *started}})
	}
	return c, exp, rows.Err()
}

// reap handles the expired leases exp, locked, and returns how many it
// buried.
func (s *Store) reap(ctx context.Context, tx pgx.Tx, c clock, p claimParams, exp []expired) (int, error) {
	var b pgx.Batch
	buried := 0
	for _, e := range exp {
		s.remember(&b, e.key, e.d, c.now, "lease expired", "", durable.Result{}, p.HistoryLen)
		if e.cancelled {
			s.retire(&b, e.key, "cancelled", c, millisCeil(p.Retention))
			continue
		}
		attempts := e.attempts
		if e.unconfirmed > 0 && e.unconfirmed <= p.UnconfirmedBound {
			attempts-- // maybe a lost claim reply: no handler ran
		}
		max := e.ownMax
		if max == 0 {
			max = p.MaxAttempts
		}
		if attempts >= max {
			b.Queue(`UPDATE pgwheel_task SET attempts = $3 WHERE namespace = $1 AND key = $2`,
				s.namespace, e.key, attempts)
			s.bury(&b, e.key, c, "lease expired") // resets unconfirmed: a Requeue starts the bound over
			buried++
			continue
		}
		b.Queue(`UPDATE pgwheel_task SET place = 'due', at = $3, attempts = $4, token = NULL,
			last_error = 'lease expired' WHERE namespace = $1 AND key = $2`, s.namespace, e.key, c.now, attempts)
	}
	return buried, sendBatch(ctx, tx, &b)
}

// lease takes up to p.Limit due tasks, earliest first, skipping rows other
// transactions hold.
//
// The UPDATE finds the rows r locked by their ctid (a TID scan per row),
// not by joining on the key: on statistics taken when the namespace was
// near empty, the planner joined on the key as a nested loop over the whole
// namespace for each leased row (EXPLAIN ANALYZE, 3,000 due tasks, 64
// leased: 36 ms, against 1.7 ms by ctid). A ctid r returns is its row's
// current version, which r's lock keeps current until the UPDATE.
func (s *Store) lease(ctx context.Context, tx pgx.Tx, c clock, p claimParams, worker string) ([]claimedTask, error) {
	rows, err := tx.Query(ctx, `WITH r AS (
		SELECT ctid, key, at FROM pgwheel_task WHERE namespace = $1 AND place = 'due' AND at <= $2
		ORDER BY at, key LIMIT $3 FOR UPDATE SKIP LOCKED)
	UPDATE pgwheel_task t SET place = 'lease', at = $4, token = nextval('pgwheel_token'),
		attempts = t.attempts + 1, unconfirmed = t.unconfirmed + 1,
		delivery_attempt = t.attempts + 1, started = $2, worker = $5
	FROM r WHERE t.ctid = r.ctid
	RETURNING t.key, t.payload, t.attempts, r.at, t.token, t.type, t.timeout_ms, t.max_attempts,
		t.backoff_base_ms, t.backoff_limit_ms, t.added, t.original_due, t.postponements`,
		s.namespace, c.now, p.Limit, c.after(millisCeil(p.Lease)), worker)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []claimedTask
	for rows.Next() {
		var t claimedTask
		var timeout, base, limit int64
		if err := rows.Scan(&t.Key, &t.Payload, &t.Attempt, &t.Due, &t.Token, &t.Policy.Type, &timeout,
			&t.Policy.MaxAttempts, &base, &limit, &t.Added, &t.OriginalDue, &t.Postponements); err != nil {
			return nil, err
		}
		t.Policy.Timeout = time.Duration(timeout) * time.Millisecond
		t.Policy.BackoffBase = time.Duration(base) * time.Millisecond
		t.Policy.BackoffLimit = time.Duration(limit) * time.Millisecond
		t.Due, t.Added, t.OriginalDue = t.Due.UTC(), t.Added.UTC(), t.OriginalDue.UTC()
		out = append(out, t)
	}
	return out, rows.Err()
}
