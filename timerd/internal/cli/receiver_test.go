package cli

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// With -accept the receiver answers 202 and prints the delivery's
// X-Completion-Token, for tasks complete and fail.
func TestReceiverAccept(t *testing.T) {
	var out, errOut syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"receiver", "-listen", "127.0.0.1:0", "-accept"}, nil, &out, &errOut)
	}()
	defer func() {
		cancel()
		select {
		case code := <-done:
			require.Equal(t, 0, code, errOut.String())
		case <-time.After(receiverWait):
			t.Fatalf("the receiver did not stop within %v of its context ending", receiverWait)
		}
	}()
	var addr string
	require.Eventually(t, func() bool {
		s := errOut.String()
		i := strings.Index(s, "http://")
		if i < 0 {
			return false
		}
		addr = strings.TrimSuffix(strings.Fields(s[i:])[0], ";")
		return true
	}, receiverWait, pollEvery, "the receiver did not say where it listens: %q", errOut.String())
	req, _ := http.NewRequest("POST", addr+"/hooks/async", strings.NewReader(`{}`))
	req.Header.Set("Idempotency-Key", "order:7")
	req.Header.Set("X-Completion-Token", "v1:1:0.42:mac")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.Contains(t, out.String(), `Idempotency-Key="order:7"`)
	require.Contains(t, out.String(), "X-Completion-Token=v1:1:0.42:mac\n")
}
