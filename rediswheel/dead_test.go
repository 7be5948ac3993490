package rediswheel

import (
	"context"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A huge limit lists everything: it used to reach ZRANGE as a float in
// exponent notation ("4.6116860184274e+18") and fail inside dead.lua.
func TestDeadHugeLimit(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Shards: 1})
	ctx := context.Background()
	d := claimOne(t, q, "k")
	res, err := q.settle(ctx, 0, []outcome{{d: d, kind: outcomeDead, err: "no"}})
	require.NoError(t, err)
	require.Equal(t, []settleCode{settleDead}, res.codes)
	limits := []int{math.MaxInt, maxDeadLimit, 1}
	if one := 1; strconv.IntSize == 64 { // shifted at run time: int is 32 bits on 386, where vet builds this too
		limits = append(limits, one<<62, maxDeadLimit+one, one<<40)
	}
	for _, limit := range limits {
		got, err := q.Dead(ctx, limit)
		require.NoError(t, err, "limit %d", limit)
		require.Len(t, got, 1, "limit %d", limit)
		assert.Equal(t, "k", got[0].Key)
		assert.Equal(t, "no", got[0].LastError)
	}
}
