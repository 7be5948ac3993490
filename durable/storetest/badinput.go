package storetest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Bad input gets durable's sentinel errors, from the Queue, before the store
// is called, and stores nothing: a batch with one bad item stores none of
// its items. One case or more per row of durable's "Bad input" table
// (doc.go), through every call that takes the argument, so the table holds
// on every store.
func testBadInputStoresNothing(t *testing.T, open func(t *testing.T) durable.Store) {
	st := open(t)
	q := newQueue(t, st, durable.Options{})
	ctx := context.Background()
	now := time.Now()
	long := strings.Repeat("k", durable.MaxKeyLen+1)
	big := make([]byte, durable.MaxPayloadLen+1) // zero pages, never touched
	bad := durable.TaskTimeout(-1)
	task := durable.HTTPTask{URL: "http://127.0.0.1:1/", Method: http.MethodPost}
	every := durable.Every
	type row struct {
		name string
		err  error
		want error
	}
	rows := []row{
		// task key: 1..MaxKeyLen bytes of UTF-8 without NUL, on every call.
		{"Add empty key", second(q.Add(ctx, "", nil, now)), durable.ErrKey},
		{"AddAfter long key", second(q.AddAfter(ctx, long, nil, time.Second)), durable.ErrKey},
		{"Add NUL in key", second(q.Add(ctx, "b\x00", nil, now)), durable.ErrKey},
		{"AddAfter invalid UTF-8 key", second(q.AddAfter(ctx, "b\xff", nil, time.Second)), durable.ErrKey},
		{"AddBatch empty key", second(q.AddBatch(ctx, []durable.Item{{Key: "ok"}, {Key: ""}})), durable.ErrKey},
		{"AddBatch NUL in key", second(q.AddBatch(ctx, []durable.Item{{Key: "a"}, {Key: "b\x00"}, {Key: "c"}})), durable.ErrKey},
		{"AddBatch invalid UTF-8 key", second(q.AddBatch(ctx, []durable.Item{{Key: "a"}, {Key: "b\xc3"}})), durable.ErrKey},
		{"Replace empty key", q.Replace(ctx, "", nil, now), durable.ErrKey},
		{"Replace NUL in key", q.Replace(ctx, "b\x00", nil, now), durable.ErrKey},
		{"Cancel empty key", second(q.Cancel(ctx, "")), durable.ErrKey},
		{"Cancel NUL in key", second(q.Cancel(ctx, "b\x00")), durable.ErrKey},
		{"Get empty key", second(q.Get(ctx, "")), durable.ErrKey},
		{"Get invalid UTF-8 key", second(q.Get(ctx, "b\xff")), durable.ErrKey},
		{"Reschedule empty key", second(q.Reschedule(ctx, "", now)), durable.ErrKey},
		{"Reschedule long key", second(q.Reschedule(ctx, long, now)), durable.ErrKey},
		{"Requeue empty key", second(q.Requeue(ctx, "")), durable.ErrKey},
		{"Requeue NUL in key", second(q.Requeue(ctx, "b\x00")), durable.ErrKey},
		{"Complete empty key", second(q.Complete(ctx, "", "0.1", nil)), durable.ErrKey},
		{"Complete invalid UTF-8 key", second(q.Complete(ctx, "b\xff", "0.1", nil)), durable.ErrKey},
		// An HTTP task's key is also a header value.
		{"AddHTTP key with a newline", second(q.AddHTTP(ctx, "a\nb", task, now)), durable.ErrKey},
		{"AddHTTPAfter key with a space at its end", second(q.AddHTTPAfter(ctx, "a ", task, time.Second)), durable.ErrKey},

		// payload: at most MaxPayloadLen bytes.
		{"Add payload", second(q.Add(ctx, "k", big, now)), durable.ErrPayload},
		{"AddAfter payload", second(q.AddAfter(ctx, "k", big, time.Second)), durable.ErrPayload},
		{"Replace payload", q.Replace(ctx, "k", big, now), durable.ErrPayload},
		{"AddBatch payload", second(q.AddBatch(ctx, []durable.Item{{Key: "a"}, {Key: "b", Payload: big}})), durable.ErrPayload},
		{"Periodic payload", q.Periodic(ctx, "p", every(time.Hour), big), durable.ErrPayload},

		// task options: as each option says.
		{"Add TaskMaxAttempts(0)", second(q.Add(ctx, "k", nil, now, durable.TaskMaxAttempts(0))), durable.ErrTaskOption},
		{"AddAfter nil option", second(q.AddAfter(ctx, "k", nil, time.Second, nil)), durable.ErrTaskOption},
		{"Replace TaskType not ASCII", q.Replace(ctx, "k", nil, now, durable.TaskType("é")), durable.ErrTaskOption},
		{"AddBatch TaskTimeout(-1)", second(q.AddBatch(ctx, []durable.Item{{Key: "a"}, {Key: "b", Options: []durable.TaskOption{bad}}})), durable.ErrTaskOption},
		{"AddHTTP TaskBackoff(2s, 1s)", second(q.AddHTTP(ctx, "k", task, now, durable.TaskBackoff(2*time.Second, time.Second))), durable.ErrTaskOption},
		{"Periodic TaskTimeout(-1)", q.Periodic(ctx, "p", every(time.Hour), nil, bad), durable.ErrTaskOption},

		// HTTP task: one net/http can send.
		{"AddHTTP URL", second(q.AddHTTP(ctx, "k", durable.HTTPTask{URL: "ftp://x/", Method: "POST"}, now)), durable.ErrInvalidURL},
		{"AddHTTPAfter method", second(q.AddHTTPAfter(ctx, "k", durable.HTTPTask{URL: task.URL, Method: "PO ST"}, time.Second)), durable.ErrInvalidMethod},
		{"ReplaceHTTP header", q.ReplaceHTTP(ctx, "k", durable.HTTPTask{URL: task.URL, Method: "POST", Header: http.Header{"Host": {"x"}}}, now), durable.ErrInvalidHeader},
		{"AddHTTP timeout", second(q.AddHTTP(ctx, "k", durable.HTTPTask{URL: task.URL, Method: "POST", Timeout: -1}, now)), durable.ErrInvalidTimeout},

		// periodic name: 1..MaxPeriodicNameLen bytes, as a key.
		{"Periodic empty name", q.Periodic(ctx, "", every(time.Hour), nil), durable.ErrPeriodicName},
		{"Periodic long name", q.Periodic(ctx, long[:durable.MaxPeriodicNameLen+1], every(time.Hour), nil), durable.ErrPeriodicName},
		{"RemovePeriodic empty name", second(q.RemovePeriodic(ctx, "")), durable.ErrPeriodicName},
		{"RemovePeriodic NUL in name", second(q.RemovePeriodic(ctx, "p\x00")), durable.ErrPeriodicName},
		{"RemovePeriodic invalid UTF-8 name", second(q.RemovePeriodic(ctx, "p\xff")), durable.ErrPeriodicName},

		// List's state, limit and cursor.
		{"List state", third(q.List(ctx, "sleeping", "", 10)), durable.ErrState},
		{"List limit", third(q.List(ctx, durable.StateDead, "", 0)), durable.ErrLimit},
		{"List cursor", third(q.List(ctx, durable.StateDead, "not a cursor", 10)), durable.ErrCursor},

		// Complete's token: a Task.Token's form, a partition the store has.
		{"Complete empty token", second(q.Complete(ctx, "k", "", nil)), durable.ErrToken},
		{"Complete token without a partition", second(q.Complete(ctx, "k", "1", nil)), durable.ErrToken},
		{"Complete token without the store's", second(q.Complete(ctx, "k", "0.", nil)), durable.ErrToken},
		{"Complete token of no partition", second(q.Complete(ctx, "k", "4096.1", errors.New("failed"))), durable.ErrToken},
		// ... of the right form, naming no current delivery: the store's
		// answer, the same on every store.
		{"Complete token of no delivery", second(q.Complete(ctx, "k", "0.1", nil)), durable.ErrStaleToken},
		{"Complete token not of this store", second(q.Complete(ctx, "k", "0.not-a-token", nil)), durable.ErrStaleToken},
		{"Complete failure of a key in no state", second(q.Complete(ctx, "k", "0.1", errors.New("failed"))), durable.ErrStaleToken},

		// Options: as each field says.
		{"New Lease", second(durable.New(st, durable.Options{Lease: time.Millisecond})), durable.ErrOptions},
		{"New MaxAttempts", second(durable.New(st, durable.Options{MaxAttempts: -1})), durable.ErrOptions},
		{"New WorkerID too long", second(durable.New(st, durable.Options{WorkerID: strings.Repeat("w", 257)})), durable.ErrOptions},
		{"New WorkerID not UTF-8", second(durable.New(st, durable.Options{WorkerID: "w\xff"})), durable.ErrOptions},
		{"New WorkerID with NUL", second(durable.New(st, durable.Options{WorkerID: "w\x00"})), durable.ErrOptions},

		// Not found is not bad input, but the same answer everywhere.
		{"Get missing", second(q.Get(ctx, "missing")), durable.ErrNotFound},
	}
	for _, r := range rows {
		if !errors.Is(r.err, r.want) {
			t.Errorf("%s: %v, want an error wrapping %v", r.name, r.err, r.want)
		}
	}
	if got := totals(t, q); got != (durable.ShardStats{}) {
		t.Errorf("Stats after refused calls: %+v, want nothing stored", got)
	}
	if ok, err := q.RemovePeriodic(ctx, "p"); ok || err != nil {
		t.Errorf("RemovePeriodic of a refused schedule: %v, %v (want false, nil: never registered)", ok, err)
	}
}

func second[T any](_ T, err error) error        { return err }
func third[T, U any](_ T, _ U, err error) error { return err }

// Input at the edges of durable's "Bad input" table that the Queue accepts
// is stored and read back alike on every store: the longest key, in
// multi-byte UTF-8, a key of control characters, due times out of every
// store's range (clamped by the Queue: up to 1970 is 1 ms, due at once;
// past 2^53 ms is 2^53 ms), a worker id and a handler's error text beyond
// ASCII, the error not UTF-8 and holding NUL bytes (made valid UTF-8
// without NUL, cut on a rune's boundary, by the Queue).
func testEdgeInputReadsBackAlike(t *testing.T, open func(t *testing.T) durable.Store) {
	q := newQueue(t, open(t), durable.Options{WorkerID: "wörker\t1", MaxAttempts: 1, HistoryLen: 1})
	ctx := context.Background()
	const maxExact = 1 << 53
	longKey := strings.Repeat("é", durable.MaxKeyLen/2)
	for _, c := range []struct {
		name, key string
		add       func(key string) error
		due       time.Time
	}{
		{"longest key", longKey, func(k string) error { return second(q.Add(ctx, k, nil, time.UnixMilli(1e13))) }, time.UnixMilli(1e13)},
		{"control characters", "\x01\t\n\u2028 ", func(k string) error { return second(q.Add(ctx, k, nil, time.UnixMilli(1e13))) }, time.UnixMilli(1e13)},
		{"zero time", "zero", func(k string) error { return second(q.Add(ctx, k, nil, time.Time{})) }, time.UnixMilli(1)},
		{"year 300000", "far", func(k string) error { return second(q.Add(ctx, k, nil, time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC))) }, time.UnixMilli(maxExact)},
		{"replace far", "replaced", func(k string) error { return q.Replace(ctx, k, nil, time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC)) }, time.UnixMilli(maxExact)},
	} {
		if err := c.add(c.key); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		info, err := q.Get(ctx, c.key)
		if err != nil || info.Key != c.key || !info.Due.Equal(c.due) {
			t.Errorf("%s: Get: key %q due %v (%d), %v; want key %q due %v", c.name, info.Key, info.Due, info.Due.UnixMilli(), err, c.key, c.due)
		}
	}
	if ok, err := q.Reschedule(ctx, "\x01\t\n\u2028 ", time.Unix(1<<62, 0)); !ok || err != nil {
		t.Errorf("Reschedule far: %v, %v", ok, err)
	} else if info, err := q.Get(ctx, "\x01\t\n\u2028 "); err != nil || info.Due.UnixMilli() != maxExact {
		t.Errorf("Reschedule far: Get %v, %v; want due at 2^53 ms", info.Due, err)
	}
	ok, err := q.Cancel(ctx, longKey)
	if !ok || err != nil {
		t.Errorf("Cancel of the longest key: %v, %v", ok, err)
	}

	// "zero" is due: its handler's error is text no SQL text column holds.
	errText := "bad \x00 \xff " + strings.Repeat("é", 600)
	died := make(chan struct{}, 1)
	run(t, q, func(_ context.Context, tk durable.Task) error {
		if tk.Key == "zero" {
			defer func() { died <- struct{}{} }()
		}
		return errors.New(errText)
	})
	await(t, died, "the delivery of zero")
	var info durable.TaskInfo
	Eventually(t, "zero dead", func() bool {
		info, err = q.Get(ctx, "zero")
		return err == nil && info.State == durable.StateDead
	})
	want := strings.ToValidUTF8(strings.ReplaceAll(errText, "\x00", ""), "\uFFFD")
	want = want[:strings.LastIndex(want[:1024+1], "é")] // cut at 1 KiB, on a rune's boundary
	if info.LastError != want {
		t.Errorf("LastError %q (%d bytes), want %q (%d bytes)", info.LastError, len(info.LastError), want, len(want))
	}
	// A history entry's error is cut at 256 bytes by the store, on a
	// character's boundary: the same prefix on every store.
	hist := want[:256]
	for !utf8.ValidString(hist) {
		hist = hist[:len(hist)-1]
	}
	if h := info.History; len(h) != 1 || h[0].Worker != "wörker\t1" || h[0].Error != hist {
		t.Errorf("History %+v, want one delivery by %q with error %q", h, "wörker\t1", hist)
	}
}
