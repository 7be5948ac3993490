package pgwheel

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
)

// appLoad is an order service's load on one pool, shared by the
// application and its Queue (issue 30): Rate checkouts a second, each a
// transaction that stores the order, works Work inside it, and adds the
// order's timer with AddTx (at most MaxCheckouts at once: the rest wait, as
// an HTTP server's requests would); half the orders are paid Pay after
// their checkout, a transaction that marks them paid and cancels their
// timer with CancelTx; the timers of the others fire After their checkout
// and the handler cancels the order through the same pool.
type appLoad struct {
	Rate         int           // checkouts per second
	Duration     time.Duration // how long checkouts start
	MaxCheckouts int           // checkouts at once
	Work         time.Duration // the application's work inside a checkout's transaction
	After        time.Duration // an order's timer
	Pay          time.Duration // a paid order is paid this long after its checkout
}

// appLoadResult is what runAppLoad measured. Lateness is each fired timer's
// handler start minus its due time (the database's, read back with the
// task), sorted.
type appLoadResult struct {
	Lateness  []time.Duration
	Checkouts []time.Duration // each checkout's transaction, from its wait for a connection to its commit, sorted
	Fired     int             // timers that fired (the unpaid orders', and those of orders paid too late)
	Unpaid    int             // orders never paid
	Paid      int             // paid orders whose timer CancelTx cancelled before it fired
}

// runAppLoad runs l on pool, with a Queue of default Options on namespace
// ns, and returns once every unpaid order's timer has fired.
func runAppLoad(ctx context.Context, t testing.TB, pool *pgxpool.Pool, ns string, l appLoad) appLoadResult {
	t.Helper()
	orders := "orders_" + randomHex(4)
	_, err := pool.Exec(ctx, `CREATE TABLE `+orders+` (id text PRIMARY KEY, state text NOT NULL)`)
	require.NoError(t, err)
	t.Cleanup(func() { sharedPool.Exec(context.Background(), `DROP TABLE `+orders) }) //nolint:errcheck // best effort
	st, err := New(pool, ns)
	require.NoError(t, err)
	q, err := durable.New(st, durable.Options{})
	require.NoError(t, err)

	var mu sync.Mutex
	var res appLoadResult
	var unpaid []string
	fired := map[string]bool{} // order id → its timer fired
	wake := make(chan struct{}, 1)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	ran := make(chan error, 1)
	go func() {
		ran <- q.Run(runCtx, func(ctx context.Context, task durable.Task) error {
			late := time.Since(task.Due)
			id := task.Key[len("order:"):]
			if _, err := pool.Exec(ctx, `UPDATE `+orders+` SET state = 'cancelled' WHERE id = $1 AND state = 'unpaid'`, id); err != nil {
				return err
			}
			mu.Lock()
			res.Lateness = append(res.Lateness, late)
			if fired[id] {
				t.Errorf("order %s: its timer fired twice", id)
			}
			fired[id] = true
			mu.Unlock()
			select {
			case wake <- struct{}{}:
			default:
			}
			return nil
		})
	}()

	checkout := func(id string) error {
		start := time.Now()
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `INSERT INTO `+orders+` (id, state) VALUES ($1, 'unpaid')`, id); err != nil {
				return err
			}
			time.Sleep(l.Work)
			added, err := st.AddTx(ctx, tx, NewTask{Key: "order:" + id, After: l.After})
			if err == nil && added[0].Status != durable.AddStored {
				err = fmt.Errorf("order %s: its timer exists already", id)
			}
			return err
		})
		mu.Lock()
		res.Checkouts = append(res.Checkouts, time.Since(start))
		mu.Unlock()
		return err
	}
	pay := func(id string) (durable.CancelResult, error) {
		var c durable.CancelResult
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `UPDATE `+orders+` SET state = 'paid' WHERE id = $1 AND state = 'unpaid'`, id); err != nil {
				return err
			}
			var err error
			c, err = st.CancelTx(ctx, tx, "order:"+id, 0, 0)
			return err
		})
		return c, err
	}

	// The orders start at Rate a second, each in a goroutine of its own
	// once one of MaxCheckouts slots is free.
	slots := make(chan struct{}, l.MaxCheckouts)
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	fail := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	n := int(l.Duration.Seconds() * float64(l.Rate))
	every := time.Second / time.Duration(l.Rate)
	begin := time.Now()
	for i := range n {
		time.Sleep(time.Until(begin.Add(time.Duration(i) * every)))
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
		id := strconv.Itoa(i)
		paid := i%2 == 0
		if !paid {
			unpaid = append(unpaid, id)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := checkout(id)
			<-slots
			if err != nil {
				fail(fmt.Errorf("checkout %s: %w", id, err))
				return
			}
			if !paid {
				return
			}
			time.Sleep(l.Pay)
			c, err := pay(id)
			switch {
			case err != nil:
				fail(fmt.Errorf("pay %s: %w", id, err))
			case c.Found:
				mu.Lock()
				res.Paid++
				mu.Unlock()
			default: // its timer fired before the payment: the order was cancelled, the payment changed nothing
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	deadline := time.After(patience)
	for {
		mu.Lock()
		left := 0
		for _, id := range unpaid {
			if !fired[id] {
				left++
			}
		}
		mu.Unlock()
		if left == 0 {
			break
		}
		select {
		case <-wake:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatalf("%d of %d unpaid orders' timers did not fire within %v", left, len(unpaid), patience)
		case err := <-ran:
			t.Fatalf("Run stopped: %v", err)
		}
	}
	stop()
	if err := <-ran; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	res.Unpaid, res.Fired = len(unpaid), len(fired)
	slices.Sort(res.Lateness)
	slices.Sort(res.Checkouts)
	return res
}

// quantile is the q-quantile of sorted ds (nearest rank).
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[min(len(ds)-1, int(q*float64(len(ds))))]
}

// defaultPool is the pool an application gets from pgxpool.New(ctx, dsn):
// MaxConns max(4, CPUs), every other setting pgxpool's own. Only the
// schema of this run is added to the URL.
func defaultPool(ctx context.Context, t testing.TB) *pgxpool.Pool {
	t.Helper()
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	v := u.Query()
	v.Set("search_path", testSchema)
	u.RawQuery = v.Encode()
	pool, err := pgxpool.New(ctx, u.String())
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// TestOrderServiceOnTheDefaultPool: an application that makes its pool with
// pgxpool.New(ctx, dsn) and its Queue with default Options, and shares
// the pool between its checkouts (64 at once, AddTx in their
// transactions), its payments (CancelTx) and its handler's writes: the
// timers fire on time while the checkouts queue for connections. Where
// the Queue's claims and settles wait in the pool's line behind the
// checkouts, timers fire seconds late (issue 30: lateness p99 1.7–5.7 s
// at 400 orders/s on a pool of 4).
//
// Its bounds are loose, for a loaded 2-core machine under -race (p50 under
// 100 ms, p99 under 2 s; the starved Queue's median was 0.67–0.83 s in this
// test's 2 s). The figures against the p99 of 50 ms come from
//
//	PGWHEEL_APPLOAD=1 go test -run TestOrderServiceOnTheDefaultPool -v
//
// (without -race), which runs the load for 20 s and logs them: lateness p50
// 3.9–4.0 ms, p99 12–14 ms, checkouts p50 225 ms (the application's own
// line for the pool's 4 connections); on the parent commit (a7da692, the
// Queue in that line) p50 6.3–7.3 s, p99 12.7–13.2 s.
func TestOrderServiceOnTheDefaultPool(t *testing.T) {
	needDB(t)
	ctx := testCtx(t)
	pool := defaultPool(ctx, t)
	l := appLoad{Rate: 400, Duration: 2 * time.Second, MaxCheckouts: 64, Work: 10 * time.Millisecond,
		After: 500 * time.Millisecond, Pay: 100 * time.Millisecond}
	if testing.Short() {
		l.Duration = time.Second
	}
	if os.Getenv("PGWHEEL_APPLOAD") == "1" {
		l.Duration = 20 * time.Second
	}
	r := runAppLoad(ctx, t, pool, "orders/"+randomHex(4), l)
	p50, p99 := quantile(r.Lateness, 0.5), quantile(r.Lateness, 0.99)
	t.Logf("pool of %d, %d orders at %d/s: %d timers fired, %d cancelled by payment; lateness p50 %v p99 %v max %v; checkout p50 %v p99 %v",
		pool.Config().MaxConns, l.Rate*int(l.Duration.Seconds()), l.Rate, r.Fired, r.Paid,
		p50, p99, r.Lateness[len(r.Lateness)-1], quantile(r.Checkouts, 0.5), quantile(r.Checkouts, 0.99))
	require.Positive(t, r.Paid, "payments cancel timers")
	// Starved, the median timer waits for the line of checkouts (0.15–0.7 s
	// in the runs that failed); fed, it waits for a claim (7–9 ms).
	require.Less(t, p50, 100*time.Millisecond, "lateness p50: the Queue starves behind the application's checkouts")
	require.Less(t, p99, 2*time.Second, "lateness p99")
	require.GreaterOrEqual(t, r.Lateness[0], time.Duration(0), "a timer fired early")
}
