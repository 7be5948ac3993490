package pgwheel

import (
	"context"
	"fmt"
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
				Delay: time.Duration(o.Delay) * time.Millisecond, Error: o.Err, Result: o.Result})
		}
	}
	st, err := s.settle(ctx, settleParams{DeadCap: lim.MaxDead, MaxAttempts: lim.MaxAttempts, HistoryLen: lim.HistoryLen,
		Retention: lim.Retention, MaxRetained: lim.MaxRetained, MaxPostponements: lim.MaxPostponements}, ss)
	if err != nil {
		return durable.Settled{}, err
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
}

// settleParams are the queue's settings Settle applies.
type settleParams struct {
	DeadCap          int
	MaxAttempts      int // the queue's; a task's own Policy.MaxAttempts wins
	HistoryLen       int
	Retention        time.Duration
	MaxRetained      int
	MaxPostponements int
}

// settled is a Settle's result.
type settled struct {
	Codes       []durable.SettleCode // one per settlement, in order
	NextDue     time.Time            // the earliest due time left in the namespace; zero when none
	DeadTrimmed int                  // dead tasks forgotten past DeadCap
	KeptTrimmed int                  // retained tasks forgotten: retention over, or past MaxRetained
}

// settle finishes deliveries, all in one transaction. Fenced: a settlement
// whose token is not the task's current one (the lease expired and was
// reaped, the task was claimed again, cancelled and forgotten, or
// replaced) changes nothing and gets durable.SettleRejected. A task Cancel marked
// while in flight finishes as cancelled whatever the outcome. A retry of a
// task out of attempts (its own MaxAttempts, or the queue's) goes dead; a
// later past MaxPostponements counts as a retry. Each settled delivery is
// appended to the task's log (done ones only with Retention, as
// rediswheel). Retained tasks whose retention has ended are trimmed, at
// least as many as this call retained plus 16.
//
// Unknown outcomes and negative delays are refused (ErrArgument) before
// anything is written.
func (s *Store) settle(ctx context.Context, p settleParams, ss []settlement) (settled, error) {
	if p.DeadCap < 0 || p.MaxAttempts < 0 || p.HistoryLen < 0 || p.Retention < 0 || p.MaxRetained < 0 || p.MaxPostponements < 0 {
		return settled{}, fmt.Errorf("%w: settle %+v", ErrArgument, p)
	}
	for _, st := range ss {
		if !knownOutcome(st.Outcome) || st.Delay < 0 {
			return settled{}, fmt.Errorf("%w: settle %q: outcome %q, delay %v", ErrArgument, st.Key, st.Outcome, st.Delay)
		}
	}
	retainMs := millisCeil(p.Retention)
	var out settled
	err := s.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		out = settled{Codes: make([]durable.SettleCode, len(ss))}
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
			case durable.SettleDead:
				buried++
			case durable.SettleDone, durable.SettleCancelled:
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
		return settled{}, fmt.Errorf("pgwheel: settle: %w", err)
	}
	return out, nil
}

// settleOne locks the task if st's token is current, and applies st as
// lua/settle.lua does.
func (s *Store) settleOne(ctx context.Context, tx pgx.Tx, c clock, p settleParams, retainMs int64, st settlement) (durable.SettleCode, error) {
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
		return durable.SettleRejected, nil
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
	code := durable.SettleRejected
	if outcome == durable.OutcomeLater {
		if postponements < p.MaxPostponements {
			b.Queue(`UPDATE pgwheel_task SET place = 'due', at = $3, postponements = postponements + 1,
				attempts = attempts - 1, token = NULL, last_error = $4, unconfirmed = 0
				WHERE namespace = $1 AND key = $2`, s.namespace, st.Key, c.after(millisCeil(st.Delay)), errText)
			code = durable.SettlePostponed
		} else {
			outcome = durable.OutcomeRetry // out of postponements: a failed attempt
		}
	}
	max := ownMax
	if max == 0 {
		max = p.MaxAttempts
	}
	if outcome == durable.OutcomeRetry && attempts >= max {
		outcome = durable.OutcomeDead
	}
	finished := outcome == durable.OutcomeDone || outcome == "cancelled"
	// The log records what was done, so a later past its bound reads as
	// the retry or death it became. Queued first: it reads the delivery
	// fields the moves below keep.
	if retainMs > 0 || !finished {
		s.remember(&b, st.Key, d, c.now, string(outcome), errText, st.Result, p.HistoryLen)
	}
	switch {
	case finished:
		s.retire(&b, st.Key, string(outcome), c, retainMs)
		code = durable.SettleDone
		if outcome != durable.OutcomeDone {
			code = durable.SettleCancelled
		}
	case outcome == durable.OutcomeRelease:
		b.Queue(`UPDATE pgwheel_task SET place = 'due', at = $3, attempts = attempts - 1, token = NULL,
			unconfirmed = 0 WHERE namespace = $1 AND key = $2`, s.namespace, st.Key, c.now)
		code = durable.SettleReleased
	case outcome == durable.OutcomeDead:
		s.bury(&b, st.Key, c, errText)
		code = durable.SettleDead
	case outcome == durable.OutcomeRetry:
		b.Queue(`UPDATE pgwheel_task SET place = 'due', at = $3, token = NULL, last_error = $4,
			unconfirmed = 0 WHERE namespace = $1 AND key = $2`, s.namespace, st.Key, c.after(millisCeil(st.Delay)), errText)
		code = durable.SettleRetry
	}
	return code, sendBatch(ctx, tx, &b)
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
