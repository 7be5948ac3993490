package pgwheel

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/jackc/pgx/v5"
)

// Settle is durable.Store's Settle. An outcome whose token is not one of
// pgwheel's (a decimal) is stale: SettleRejected.
func (s *Store) Settle(ctx context.Context, partition int, lim durable.Limits, outcomes []durable.Outcome) (durable.Settled, error) {
	ss := make([]settlement, 0, len(outcomes))
	for _, o := range outcomes {
		if tok, ok := parseToken(o.Token); ok {
			ss = append(ss, settlement{Key: o.Key, Token: tok, Outcome: o.Kind,
				Delay: time.Duration(o.Delay) * time.Millisecond, Error: o.Err, Result: o.Result,
				Waited: time.Duration(o.Waited) * time.Millisecond})
		}
	}
	st, err := s.settle(ctx, settleParams{DeadCap: lim.MaxDead, HistoryLen: lim.HistoryLen,
		Retention: lim.Retention, MaxRetained: lim.MaxRetained}, ss)
	if err != nil {
		return durable.Settled{}, unavailable(err)
	}
	out := durable.Settled{Codes: make([]durable.SettleCode, len(outcomes)), Next: millisOf(st.NextDue),
		DeadTrimmed: st.DeadTrimmed, RetainedTrimmed: st.KeptTrimmed}
	j := 0
	for i, o := range outcomes {
		if _, ok := parseToken(o.Token); ok {
			out.Codes[i] = st.Codes[j]
			j++
		} // else SettleRejected, the zero code
	}
	return out, nil
}

// settlement is one finished delivery.
type settlement struct {
	Key     string
	Token   int64
	Outcome durable.OutcomeKind
	Delay   time.Duration  // retry and later: from the database clock at Settle, rounded up
	Error   string         // the handler's error, stored as the task's last error
	Result  durable.Result // what the delivery produced, kept in its log entry
	Waited  time.Duration  // durable.Outcome.Waited: the log entry starts that much after the claim
}

// settleParams are the queue's settings Settle applies.
type settleParams struct {
	DeadCap     int
	HistoryLen  int
	Retention   time.Duration
	MaxRetained int
}

// settled is a Settle's result.
type settled struct {
	Codes       []durable.SettleCode // one per settlement, in order
	NextDue     time.Time            // the earliest due time the call gave a task; zero when none
	DeadTrimmed int                  // dead tasks forgotten past DeadCap
	KeptTrimmed int                  // retained tasks forgotten: retention over, or past MaxRetained
}

// settle finishes deliveries, all in one transaction. Fenced: a settlement
// whose token is not the task's current one (the lease expired and was
// reaped, the task was claimed again, cancelled and forgotten, or
// replaced) changes nothing and gets durable.SettleRejected. Each outcome is
// recorded as its kind says (durable's state table): the Queue decided it.
// The one override: a task Cancel marked while in flight finishes as
// cancelled whatever the outcome. Each settled delivery is appended to the
// task's log (done ones only with Retention, as rediswheel). Retained tasks whose retention has ended are trimmed, at
// least as many as this call retained plus 16.
//
// Round trips: with only done outcomes and no retention, one (see
// settleForget); else BEGIN, one pipeline (the clock, a DELETE per done
// task when there is no retention, a locking SELECT per other task), one
// pipeline of the other tasks' moves and the trims, COMMIT. No query for the namespace's next due time: the Queue learns of
// the tasks this call makes due again from NextDue, and of every other from
// Claim.
//
// Unknown outcomes and negative delays are refused (ErrArgument) before
// anything is written.
func (s *Store) settle(ctx context.Context, p settleParams, ss []settlement) (settled, error) {
	if p.DeadCap < 0 || p.HistoryLen < 0 || p.Retention < 0 || p.MaxRetained < 0 {
		return settled{}, fmt.Errorf("%w: settle %+v", ErrArgument, p)
	}
	for _, st := range ss {
		if !knownOutcome(st.Outcome) || st.Delay < 0 {
			return settled{}, fmt.Errorf("%w: settle %q: outcome %q, delay %v", ErrArgument, st.Key, st.Outcome, st.Delay)
		}
	}
	retainMs := millisCeil(p.Retention)
	plan := planSettle(ss, retainMs)
	if len(plan.lock) == 0 {
		return s.settleForget(ctx, ss, plan)
	}
	var out settled
	err := s.inRunTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		out = settled{Codes: make([]durable.SettleCode, len(ss))}
		c, locked, err := s.settleLock(ctx, tx, ss, plan, out.Codes)
		if err != nil {
			return err
		}
		var b pgx.Batch
		buried, retained := 0, 0
		var next time.Time // the earliest due time the call sets
		for _, l := range locked {
			code, due := s.settleOne(&b, c, p, retainMs, ss[l.i], l)
			out.Codes[l.i] = code
			switch code {
			case durable.SettleDead:
				buried++
			case durable.SettleDone, durable.SettleCancelled:
				if retainMs > 0 {
					retained++
				}
			}
			if !due.IsZero() && (next.IsZero() || due.Before(next)) {
				next = due
			}
		}
		moves := b.Len()
		if buried > 0 {
			b.Queue(trimDeadSQL, s.namespace, p.DeadCap, trimDeadLimit*buried)
		}
		keptLimit := 16 + retained
		b.Queue(trimKeptExpiredSQL, s.namespace, keptLimit)
		// One round trip for every move and trim.
		br := tx.SendBatch(ctx, &b)
		for range moves {
			if _, err := br.Exec(); err != nil {
				br.Close()
				return err
			}
		}
		if buried > 0 {
			tag, err := br.Exec()
			if err != nil {
				br.Close()
				return fmt.Errorf("trim dead: %w", err)
			}
			out.DeadTrimmed = int(tag.RowsAffected())
		}
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			return fmt.Errorf("trim retained: %w", err)
		}
		out.KeptTrimmed = int(tag.RowsAffected())
		if err := br.Close(); err != nil {
			return err
		}
		if retained > 0 && out.KeptTrimmed < keptLimit {
			tag, err := tx.Exec(ctx, trimKeptOverCapSQL, s.namespace, p.MaxRetained, keptLimit-out.KeptTrimmed)
			if err != nil {
				return fmt.Errorf("trim retained: %w", err)
			}
			out.KeptTrimmed += int(tag.RowsAffected())
		}
		out.NextDue = next
		return nil
	})
	if err != nil {
		return settled{}, fmt.Errorf("pgwheel: settle: %w", err)
	}
	return out, nil
}

// settling is a task in flight that settleLock locked for ss[i], its token
// current.
type settling struct {
	i         int
	cancelled bool
	d         delivering
}

// settleForgetSQL finishes, at once and without a trace, the task in
// flight under $2 with token $3: a done outcome without retention, the
// most common settle (lua/settle.lua forgets such a task the same way). A
// cancelled one is forgotten too: it finishes as cancelled, and without
// retention nothing of it is kept either.
//
// One statement per task, all in one pipeline, rather than one statement
// over arrays: each is a lookup of one task by its primary key (the place
// compared as placeOnly: see there), while a join of the table with
// unnest'ed arrays was planned, on statistics taken when the namespace was
// near empty, as a scan of the whole namespace (EXPLAIN ANALYZE, 3,000
// leased tasks, 64 settled: a hash join over the 3,000), which breaks the
// bound on a call's work.
const settleForgetSQL = `DELETE FROM pgwheel_task
	WHERE namespace = $1 AND key = $2 AND ` + placeOnly + ` = 'lease' AND token = $3
	RETURNING cancel_requested`

// placeOnly is the place column in a lookup of one task by its key, written
// so that no index can serve the comparison: the lookup then goes by the
// primary key. Compared as plain place, the generic plan pgx's prepared
// statements get after their fifth run went by pgwheel_task_place_at (the
// place index before schema version 5)
// (namespace, place, at, key) instead, the key only a filter inside it, so
// each lookup walked every index entry of the namespace's place, the dead
// ones every lease and settle leave behind included, until a vacuum: on
// sqlbench's fires workload with 20,000 due tasks, a settle's DELETE took
// 0.06 ms for the first 2,000 tasks and 1.0 ms for the last 2,000
// (log_min_duration_statement = 0), 10 s of the workload's 11.
const placeOnly = `(place || '')`

// settleLockSQL is the fencing check of every other outcome: it locks the
// task if its token is current, and reads what settleOne needs. settleLock
// sends them in key order, so that two settles never wait on each other in
// a cycle.
const settleLockSQL = `SELECT cancel_requested,
		coalesce(delivery_attempt, -1), coalesce(worker, ''), coalesce(started, 'epoch')
	FROM pgwheel_task WHERE namespace = $1 AND key = $2 AND ` + placeOnly + ` = 'lease' AND token = $3
	FOR UPDATE`

// delivery names one delivery: a task's key and its token.
type delivery struct {
	key   string
	token int64
}

// settlePlan sorts a Settle's outcomes, as indexes in the call: forget
// holds the done outcomes when there is no retention (settleForgetSQL),
// lock every other (settleLockSQL); each in key order, each delivery once,
// from its first outcome (a later one for the same delivery would find its
// token stale: SettleRejected).
type settlePlan struct {
	forget, lock []int
}

func planSettle(ss []settlement, retainMs int64) settlePlan {
	var p settlePlan
	seen := make(map[delivery]bool, len(ss))
	for i, st := range ss {
		d := delivery{st.Key, st.Token}
		if seen[d] {
			continue
		}
		seen[d] = true
		if st.Outcome == durable.OutcomeDone && retainMs <= 0 {
			p.forget = append(p.forget, i)
		} else {
			p.lock = append(p.lock, i)
		}
	}
	byKey := func(idx []int) {
		sort.Slice(idx, func(a, b int) bool { return ss[idx[a]].Key < ss[idx[b]].Key })
	}
	byKey(p.forget)
	byKey(p.lock)
	return p
}

// queueForget queues settleForgetSQL for each of plan.forget.
func (s *Store) queueForget(b *pgx.Batch, ss []settlement, plan settlePlan) {
	for _, i := range plan.forget {
		b.Queue(settleForgetSQL, s.namespace, ss[i].Key, ss[i].Token)
	}
}

// forgotten reads the replies of queueForget's statements into codes.
func forgotten(br pgx.BatchResults, ss []settlement, plan settlePlan, codes []durable.SettleCode) error {
	for _, i := range plan.forget {
		var cancelled bool
		switch err := br.QueryRow().Scan(&cancelled); {
		case errors.Is(err, pgx.ErrNoRows): // stale: SettleRejected
		case err != nil:
			return err
		case cancelled:
			codes[i] = durable.SettleCancelled
		default:
			codes[i] = durable.SettleDone
		}
	}
	return nil
}

// settleForget is a settle with nothing to lock (only done outcomes, no
// retention), the common one: settleForgetSQL and the trim of expired
// retained tasks in one pipeline, which PostgreSQL runs as one implicit
// transaction (one Sync): one round trip, no BEGIN or COMMIT. Nothing is
// made due again: NextDue is zero.
func (s *Store) settleForget(ctx context.Context, ss []settlement, plan settlePlan) (settled, error) {
	out := settled{Codes: make([]durable.SettleCode, len(ss))}
	var b pgx.Batch
	s.queueForget(&b, ss, plan)
	b.Queue(trimKeptExpiredSQL, s.namespace, 16)
	br := s.runPool().SendBatch(ctx, &b)
	err := func() error {
		if err := forgotten(br, ss, plan, out.Codes); err != nil {
			return err
		}
		tag, err := br.Exec()
		if err != nil {
			return fmt.Errorf("trim retained: %w", err)
		}
		out.KeptTrimmed = int(tag.RowsAffected())
		return nil
	}()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return settled{}, fmt.Errorf("pgwheel: settle: %w", err)
	}
	return out, nil
}

// settleLock reads the clock, forgets plan.forget's tasks (setting their
// codes), and locks plan.lock's tasks whose token is current, all in one
// round trip.
func (s *Store) settleLock(ctx context.Context, tx pgx.Tx, ss []settlement, plan settlePlan, codes []durable.SettleCode) (clock, []settling, error) {
	var b pgx.Batch
	b.Queue(clockSQL)
	s.queueForget(&b, ss, plan)
	for _, i := range plan.lock {
		b.Queue(settleLockSQL, s.namespace, ss[i].Key, ss[i].Token)
	}
	br := tx.SendBatch(ctx, &b)
	defer br.Close()
	var c clock
	if err := br.QueryRow().Scan(&c.now, &c.nowUp); err != nil {
		return clock{}, nil, err
	}
	if err := forgotten(br, ss, plan, codes); err != nil {
		return clock{}, nil, err
	}
	var locked []settling
	for _, i := range plan.lock {
		l := settling{i: i}
		err := br.QueryRow().Scan(&l.cancelled, &l.d.attempt, &l.d.worker, &l.d.started)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // stale: SettleRejected
		}
		if err != nil {
			return clock{}, nil, err
		}
		locked = append(locked, l)
	}
	return c, locked, br.Close()
}

// settleOne queues on b the moves of st, whose task t is locked with st's
// token current, as its kind says (durable's state table), and returns st's
// code and the due time it gives the task (zero unless it is due again).
func (s *Store) settleOne(b *pgx.Batch, c clock, p settleParams, retainMs int64, st settlement, t settling) (durable.SettleCode, time.Time) {
	errText := storableText(st.Error)
	outcome := st.Outcome
	if t.cancelled {
		outcome = "cancelled"
	}
	finished := outcome == durable.OutcomeDone || outcome == "cancelled"
	// Queued first: it reads the delivery fields the moves below keep.
	if retainMs > 0 || !finished {
		d := t.d
		if st.Waited > 0 { // the handler started later than the claim: durable.Outcome.Waited
			if d.started = d.started.Add(st.Waited); d.started.After(c.now) {
				d.started = c.now
			}
		}
		s.remember(b, st.Key, d, c.now, string(outcome), errText, st.Result, p.HistoryLen)
	}
	switch outcome {
	case durable.OutcomeDone, "cancelled":
		s.retire(b, st.Key, string(outcome), c, retainMs)
		if outcome != durable.OutcomeDone {
			return durable.SettleCancelled, time.Time{}
		}
		return durable.SettleDone, time.Time{}
	case durable.OutcomeRelease:
		b.Queue(`UPDATE pgwheel_task SET place = 'due', at = $3, attempts = attempts - 1, token = NULL,
			unconfirmed = 0 WHERE namespace = $1 AND key = $2`, s.namespace, st.Key, c.now)
		return durable.SettleReleased, c.now
	case durable.OutcomeDead:
		s.bury(b, st.Key, c, errText)
		return durable.SettleDead, time.Time{}
	case durable.OutcomeRetry:
		due := c.after(millisCeil(st.Delay))
		b.Queue(`UPDATE pgwheel_task SET place = 'due', at = $3, token = NULL, last_error = $4,
			postponements = 0, unconfirmed = 0 WHERE namespace = $1 AND key = $2`, s.namespace, st.Key, due, errText)
		return durable.SettleRetry, due
	default: // later; settle refused any other kind
		due := c.after(millisCeil(st.Delay))
		b.Queue(`UPDATE pgwheel_task SET place = 'due', at = $3, postponements = postponements + 1,
			attempts = attempts - 1, token = NULL, last_error = $4, unconfirmed = 0
			WHERE namespace = $1 AND key = $2`, s.namespace, st.Key, due, errText)
		return durable.SettlePostponed, due
	}
}

// knownOutcome reports whether o is one of durable's outcome kinds; Settle
// refuses any other rather than guess.
func knownOutcome(o durable.OutcomeKind) bool {
	switch o {
	case durable.OutcomeDone, durable.OutcomeRetry, durable.OutcomeDead, durable.OutcomeRelease, durable.OutcomeLater:
		return true
	}
	return false
}
