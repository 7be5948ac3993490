package sqlitewheel

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Settle is durable.Store's Settle, all outcomes in one write transaction. Unknown outcomes and negative delays are refused before
// anything is written: a typo must never retry a task.
func (s *Store) Settle(ctx context.Context, partition int, lim durable.Limits, outcomes []durable.Outcome) (durable.Settled, error) {
	if partition != 0 {
		return durable.Settled{}, fmt.Errorf("sqlitewheel: settle: partition %d", partition)
	}
	for _, o := range outcomes {
		switch o.Kind {
		case durable.OutcomeDone, durable.OutcomeRetry, durable.OutcomeDead, durable.OutcomeRelease, durable.OutcomeLater:
		default:
			return durable.Settled{}, fmt.Errorf("sqlitewheel: settle %q: unknown outcome %q", o.Key, o.Kind)
		}
		if o.Delay < 0 {
			return durable.Settled{}, fmt.Errorf("sqlitewheel: settle %q: delay %d ms", o.Key, o.Delay)
		}
	}
	retainMs := millisCeil(lim.Retention)
	var out durable.Settled
	err := s.write(ctx, func(tx *sql.Tx, c clock) error {
		out = durable.Settled{Codes: make([]durable.SettleCode, len(outcomes))}
		buried, retained := 0, 0
		for i, o := range outcomes {
			code, err := s.settleOne(ctx, tx, c, lim, retainMs, o)
			if err != nil {
				return fmt.Errorf("%q: %w", o.Key, err)
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
		var err error
		if buried > 0 {
			if out.DeadTrimmed, err = s.trimDead(ctx, tx, lim.MaxDead, trimDeadLimit*buried); err != nil {
				return fmt.Errorf("trim dead: %w", err)
			}
		}
		// At least as many as this call retained, so the retained tasks
		// cannot outgrow MaxRetained, plus a few whose retention ended.
		if out.RetainedTrimmed, err = s.trimKept(ctx, tx, c, lim.MaxRetained, 16+retained); err != nil {
			return fmt.Errorf("trim retained: %w", err)
		}
		out.Next, err = s.first(ctx, tx, "due")
		return err
	})
	if err != nil {
		return durable.Settled{}, fmt.Errorf("sqlitewheel: settle: %w", err)
	}
	return out, nil
}

// settleOne records o if its token is current, as its Kind says (durable's
// state table); the one override is a task Cancel marked in flight, finished
// as cancelled.
func (s *Store) settleOne(ctx context.Context, tx *sql.Tx, c clock, lim durable.Limits, retainMs int64, o durable.Outcome) (durable.SettleCode, error) {
	token, ok := parseToken(o.Token)
	if !ok {
		return durable.SettleRejected, nil
	}
	var cancelled bool
	var d delivering
	// The fencing check: only the holder of the current token may finish a task.
	err := tx.QueryRowContext(ctx, `SELECT cancel_requested,
		coalesce(delivery_attempt, -1), coalesce(worker, ''), coalesce(started, 0)
		FROM sqlitewheel_task WHERE namespace = ? AND key = ? AND place = 'lease' AND token = ?`,
		s.namespace, o.Key, token).Scan(&cancelled, &d.attempt, &d.worker, &d.started)
	if err == sql.ErrNoRows {
		return durable.SettleRejected, nil
	}
	if err != nil {
		return 0, err
	}
	outcome := string(o.Kind)
	if cancelled {
		outcome = "cancelled"
	}
	finished := outcome == string(durable.OutcomeDone) || outcome == "cancelled"
	// A done task without retention leaves no log to read.
	if retainMs > 0 || !finished {
		if o.Waited > 0 { // the handler started later than the claim: durable.Outcome.Waited
			d.started = min(d.started+o.Waited, c.now)
		}
		if err := s.remember(ctx, tx, o.Key, d, c.now, outcome, o.Err, o.Result, lim.HistoryLen); err != nil {
			return 0, err
		}
	}
	exec := func(q string, args ...any) error {
		_, err := tx.ExecContext(ctx, q, append([]any{s.namespace, o.Key}, args...)...)
		return err
	}
	switch {
	case finished:
		if err := s.retire(ctx, tx, o.Key, outcome, c, retainMs); err != nil {
			return 0, err
		}
		if outcome != string(durable.OutcomeDone) {
			return durable.SettleCancelled, nil
		}
		return durable.SettleDone, nil
	case outcome == string(durable.OutcomeRelease):
		return durable.SettleReleased, exec(`UPDATE sqlitewheel_task SET place = 'due', at = ?3, attempts = attempts - 1,
			token = NULL, unconfirmed = 0 WHERE namespace = ?1 AND key = ?2`, c.now)
	case outcome == string(durable.OutcomeDead):
		return durable.SettleDead, s.bury(ctx, tx, o.Key, c, o.Err)
	case outcome == string(durable.OutcomeRetry):
		return durable.SettleRetry, exec(`UPDATE sqlitewheel_task SET place = 'due', at = ?3, token = NULL, last_error = ?4,
			postponements = 0, unconfirmed = 0 WHERE namespace = ?1 AND key = ?2`, c.after(o.Delay), o.Err)
	default: // later; Settle refused any other kind
		// Why it waits is its last error (RetryAfterError's doc), as a retry's.
		return durable.SettlePostponed, exec(`UPDATE sqlitewheel_task SET place = 'due', at = ?3,
			postponements = postponements + 1, attempts = attempts - 1, token = NULL, last_error = ?4, unconfirmed = 0
			WHERE namespace = ?1 AND key = ?2`, c.after(o.Delay), o.Err)
	}
}
