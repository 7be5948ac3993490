package rediswheel

import (
	"context"
	"fmt"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Settle applies outcomes, all in shard, and returns one settle code each
// (durable.Store's Settle); durable's OutcomeKind and SettleCode spell
// lua/settle.lua's names and numbers.
//
// The arguments and the reply are lua/settle.lua's: change both together.
func (s *Store) Settle(ctx context.Context, shard int, lim durable.Limits, os []durable.Outcome) (_ durable.Settled, err error) {
	defer unavailable(&err)
	if err := s.resolve(ctx); err != nil {
		return durable.Settled{}, err
	}
	args := make([]any, 0, 4+7*len(os))
	args = append(args, lim.MaxDead, lim.HistoryLen, durationMilliCeil(lim.Retention), lim.MaxRetained)
	for _, o := range os {
		args = append(args, o.Key, o.Token, string(o.Kind), o.Delay, o.Err, encodeResult(o.Result), max(o.Waited, 0))
	}
	v, err := settleScript.Run(ctx, s.client, s.keys[shard], args...).Int64Slice()
	if err == nil && len(v) != len(os)+3 {
		err = fmt.Errorf("unexpected reply %v", v)
	}
	for i := 0; err == nil && i < len(os); i++ {
		if v[i] < int64(durable.SettleRejected) || v[i] > int64(durable.SettlePostponed) {
			err = fmt.Errorf("unexpected reply %v", v)
		}
	}
	if err != nil {
		return durable.Settled{}, fmt.Errorf("rediswheel: settle shard %d: %w", shard, err)
	}
	n := len(os)
	codes := make([]durable.SettleCode, n)
	for i := range codes {
		codes[i] = durable.SettleCode(v[i])
	}
	return durable.Settled{Codes: codes, Next: v[n], DeadTrimmed: int(v[n+1]), RetainedTrimmed: int(v[n+2])}, nil
}
