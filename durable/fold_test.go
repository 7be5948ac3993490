package durable

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replyStore is a Store whose Add answers each request with reply and
// records the keys of every call.
type replyStore struct {
	Store
	reply func(r *AddRequest)
	calls [][]string
}

func (*replyStore) Partitions() int { return 1 }

func (s *replyStore) Add(_ context.Context, reqs []*AddRequest) int64 {
	var keys []string
	for _, r := range reqs {
		keys = append(keys, r.Key)
		s.reply(r)
	}
	s.calls = append(s.calls, keys)
	return -1
}

// Requests of one key that meet in one Store.Add (a group commit) reach the
// store once, as if the Replaces came first, in their order, then the Adds:
// the last Replace is stored, every Add reports the key existing, and no
// acknowledged Replace is lost to an Add.
func TestRepeatedKeysFoldIntoOneRequest(t *testing.T) {
	boom := errors.New("boom")
	stored := func(r *AddRequest) { r.Status = AddStored }
	exists := func(r *AddRequest) { r.Status = AddExists } // a key that exists, not in flight
	inFlight := func(r *AddRequest) {
		if r.Replace {
			r.Status = AddInFlight
		}
	}
	failed := func(r *AddRequest) { r.Err = boom }
	type req struct {
		replace bool
		payload string
	}
	A := func(p string) req { return req{false, p} }
	R := func(p string) req { return req{true, p} }
	for _, tc := range []struct {
		name  string
		reqs  []req
		reply func(*AddRequest)
		sent  string      // the payload the store got
		want  []AddStatus // one per request
		err   error
	}{
		{"Add, Add: the first", []req{A("1"), A("2")}, stored, "1", []AddStatus{AddStored, AddExists}, nil},
		{"Add, Add on an existing key", []req{A("1"), A("2")}, exists, "1", []AddStatus{AddExists, AddExists}, nil},
		{"Add, Replace: the Replace wins", []req{A("1"), R("2")}, stored, "2", []AddStatus{AddExists, AddStored}, nil},
		{"Replace, Add", []req{R("1"), A("2")}, stored, "1", []AddStatus{AddStored, AddExists}, nil},
		{"Replace, Replace: the last", []req{R("1"), A("2"), R("3"), A("4")}, stored, "3", []AddStatus{AddStored, AddExists, AddStored, AddExists}, nil},
		{"in flight", []req{A("1"), R("2"), R("3")}, inFlight, "3", []AddStatus{AddExists, AddInFlight, AddInFlight}, nil},
		{"a failed part: its error for all", []req{A("1"), R("2")}, failed, "2", []AddStatus{0, 0}, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &replyStore{reply: func(r *AddRequest) {
				require.Equal(t, tc.sent, string(r.Payload), "the request sent")
				tc.reply(r)
			}}
			q := stubQueueOn(t, st, Options{})
			reqs := []*AddRequest{{Key: "other", Payload: []byte(tc.sent)}}
			for _, r := range tc.reqs {
				reqs = append(reqs, &AddRequest{Key: "k", Replace: r.replace, Payload: []byte(r.payload)})
			}
			q.sendAdds(context.Background(), reqs)
			require.Equal(t, [][]string{{"other", "k"}}, st.calls, "one request per key, in one call")
			for i, r := range reqs[1:] {
				assert.Equal(t, tc.want[i], r.Status, "request %d", i)
				assert.Equal(t, tc.err, r.Err, "request %d", i)
			}
		})
	}

	// AddBatch folds its own repeats the same way: the first item wins.
	st := &replyStore{reply: stored}
	added, err := stubQueueOn(t, st, Options{}).AddBatch(context.Background(), []Item{{Key: "a"}, {Key: "b"}, {Key: "a"}})
	require.NoError(t, err)
	assert.Equal(t, "[true true false]", fmt.Sprint(added))
	assert.Equal(t, [][]string{{"a", "b"}}, st.calls)
}
