package pgwheel

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Outcome is what a finished delivery asks of Settle; the names are
// rediswheel's outcomeKind names.
type Outcome string

const (
	OutcomeDone    Outcome = "done"    // the handler returned nil: the task is finished
	OutcomeRetry   Outcome = "retry"   // failed: due again after Delay, or dead when out of attempts
	OutcomeDead    Outcome = "dead"    // failed for good: dead at once
	OutcomeRelease Outcome = "release" // the worker stops: due again at once, attempt not counted
	OutcomeLater   Outcome = "later"   // RetryAfter: due after Delay, attempt not counted (bounded)
)

func (o Outcome) valid() bool {
	switch o {
	case OutcomeDone, OutcomeRetry, OutcomeDead, OutcomeRelease, OutcomeLater:
		return true
	}
	return false
}

// SettleCode is what Settle did with one Settlement; the numbers are
// rediswheel's settleCode.
type SettleCode int

const (
	SettleRejected  SettleCode = 0 // the token is not the current delivery's: nothing changed
	SettleDone      SettleCode = 1 // finished (forgotten, or retained)
	SettleRetry     SettleCode = 2 // due again after the delay, attempt counted
	SettleDead      SettleCode = 3 // dead
	SettleCancelled SettleCode = 4 // Cancel came first: finished as cancelled, never retried
	SettleReleased  SettleCode = 5 // due again at once, attempt not counted
	SettlePostponed SettleCode = 6 // later: due again after the delay, attempt not counted
)

// Settlement is one finished delivery.
type Settlement struct {
	Key     string
	Token   int64
	Outcome Outcome
	Delay   time.Duration // retry and later: from the database clock at Settle, rounded up
	Error   string        // the handler's error, stored as the task's last error
}

// SettleParams are the queue's settings Settle applies.
type SettleParams struct {
	DeadCap          int
	MaxAttempts      int // the queue's; a task's own Policy.MaxAttempts wins
	HistoryLen       int
	Retention        time.Duration
	MaxRetained      int
	MaxPostponements int
}

// Settled is a Settle's result.
type Settled struct {
	Codes       []SettleCode // one per Settlement, in order
	NextDue     time.Time    // the earliest due time left in the namespace; zero when none
	DeadTrimmed int          // dead tasks forgotten past DeadCap
	KeptTrimmed int          // retained tasks forgotten: retention over, or past MaxRetained
}

// Settle finishes deliveries, all in one transaction. Fenced: a Settlement
// whose token is not the task's current one (the lease expired and was
// reaped, the task was claimed again, cancelled and forgotten, or
// replaced) changes nothing and gets SettleRejected. A task Cancel marked
// while in flight finishes as cancelled whatever the outcome. A retry of a
// task out of attempts (its own MaxAttempts, or the queue's) goes dead; a
// later past MaxPostponements counts as a retry. Each settled delivery is
// appended to the task's log (done ones only with Retention, as
// rediswheel). Retained tasks whose retention has ended are trimmed, at
// least as many as this call retained plus 16.
//
// Unknown outcomes and negative delays are refused (ErrArgument) before
// anything is written.
func (s *Store) Settle(ctx context.Context, p SettleParams, ss []Settlement) (Settled, error) {
	if p.DeadCap < 0 || p.MaxAttempts < 0 || p.HistoryLen < 0 || p.Retention < 0 || p.MaxRetained < 0 || p.MaxPostponements < 0 {
		return Settled{}, fmt.Errorf("%w: settle %+v", ErrArgument, p)
	}
	for _, st := range ss {
		if !st.Outcome.valid() || st.Delay < 0 {
			return Settled{}, fmt.Errorf("%w: settle %q: outcome %q, delay %v", ErrArgument, st.Key, st.Outcome, st.Delay)
		}
	}
	retainMs := millisCeil(p.Retention)
	var out Settled
	err := s.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		out = Settled{Codes: make([]SettleCode, len(ss))}
		c, err := readClock(ctx, tx)
		if err != nil {
			return err
		}
		buried, retained := 0, 0
		for i, st := range ss {
			code, err := s.settleOne(ctx, tx, c, p, retainMs, st)
			if err != nil {
				return fmt.Errorf("%q: %w", st.Key, err)
			}
			out.Codes[i] = code
			switch code {
			case SettleDead:
				buried++
			case SettleDone, SettleCancelled:
				if retainMs > 0 {
					retained++
				}
			}
		}
		if buried > 0 {
			if out.DeadTrimmed, err = s.trimDead(ctx, tx, p.DeadCap, trimDeadLimit*buried); err != nil {
				return fmt.Errorf("trim dead: %w", err)
			}
		}
		if out.KeptTrimmed, err = s.trimKept(ctx, tx, c, p.MaxRetained, 16+retained, retained > 0); err != nil {
			return fmt.Errorf("trim retained: %w", err)
		}
		var next int64
		if err := tx.QueryRow(ctx, `SELECT `+msOf(`(SELECT min(at) FROM pgwheel_task WHERE namespace = $1 AND place = 'due')`),
			s.namespace).Scan(&next); err != nil {
			return fmt.Errorf("next: %w", err)
		}
		out.NextDue = fromMillis(next)
		return nil
	})
	if err != nil {
		return Settled{}, fmt.Errorf("pgwheel: settle: %w", err)
	}
	return out, nil
}

// settleOne locks the task if st's token is current, and applies st as
// lua/settle.lua does.
func (s *Store) settleOne(ctx context.Context, tx pgx.Tx, c clock, p SettleParams, retainMs int64, st Settlement) (SettleCode, error) {
	var attempts, postponements, ownMax int
	var cancelled bool
	var d delivering
	// The fencing check: only the holder of the current token may finish a task.
	err := tx.QueryRow(ctx, `SELECT attempts, postponements, max_attempts, cancel_requested,
		coalesce(delivery_attempt, -1), coalesce(worker, ''), coalesce(started, 'epoch')
		FROM pgwheel_task WHERE namespace = $1 AND key = $2 AND place = 'lease' AND token = $3
		FOR UPDATE`, s.namespace, st.Key, st.Token).Scan(&attempts, &postponements, &ownMax, &cancelled,
		&d.attempt, &d.worker, &d.started)
	if err == pgx.ErrNoRows {
		return SettleRejected, nil
	}
	if err != nil {
		return 0, err
	}
	errText := storableText(st.Error)
	outcome := st.Outcome
	if cancelled {
		outcome = "cancelled"
	}
	var b pgx.Batch
	code := SettleRejected
	if outcome == OutcomeLater {
		if postponements < p.MaxPostponements {
			b.Queue(`UPDATE pgwheel_task SET place = 'due', at = $3, postponements = postponements + 1,
				attempts = attempts - 1, token = NULL, last_error = $4, unconfirmed = 0
				WHERE namespace = $1 AND key = $2`, s.namespace, st.Key, c.after(millisCeil(st.Delay)), errText)
			code = SettlePostponed
		} else {
			outcome = OutcomeRetry // out of postponements: a failed attempt
		}
	}
	max := ownMax
	if max == 0 {
		max = p.MaxAttempts
	}
	if outcome == OutcomeRetry && attempts >= max {
		outcome = OutcomeDead
	}
	finished := outcome == OutcomeDone || outcome == "cancelled"
	// The log records what was done, so a later past its bound reads as
	// the retry or death it became. Queued first: it reads the delivery
	// fields the moves below keep.
	if retainMs > 0 || !finished {
		s.remember(&b, st.Key, d, c.now, string(outcome), errText, p.HistoryLen)
	}
	switch {
	case finished:
		s.retire(&b, st.Key, string(outcome), c, retainMs)
		code = SettleDone
		if outcome != OutcomeDone {
			code = SettleCancelled
		}
	case outcome == OutcomeRelease:
		b.Queue(`UPDATE pgwheel_task SET place = 'due', at = $3, attempts = attempts - 1, token = NULL,
			unconfirmed = 0 WHERE namespace = $1 AND key = $2`, s.namespace, st.Key, c.now)
		code = SettleReleased
	case outcome == OutcomeDead:
		s.bury(&b, st.Key, c, errText)
		code = SettleDead
	case outcome == OutcomeRetry:
		b.Queue(`UPDATE pgwheel_task SET place = 'due', at = $3, token = NULL, last_error = $4,
			unconfirmed = 0 WHERE namespace = $1 AND key = $2`, s.namespace, st.Key, c.after(millisCeil(st.Delay)), errText)
		code = SettleRetry
	}
	return code, sendBatch(ctx, tx, &b)
}
