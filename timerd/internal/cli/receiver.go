package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// maxReceivedBody bounds how much of a request body the receiver prints.
const maxReceivedBody = 4 << 10

// runReceiver serves a callback receiver for trying timerd out: each request
// is printed as one line (method, path, the task key, the attempt, the
// traceparent, the body) and answered 200, until ctx ends. With -accept it
// answers 202 Accepted instead, so that each task waits in flight for
// "timerd tasks complete" or "fail", and the line ends with the
// X-Completion-Token those commands need.
func runReceiver(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("timerd receiver", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.String("listen", "127.0.0.1:9000", "")
	accept := fs.Bool("accept", false, "")
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		Help(stdout, "receiver")
		return err
	}
	if err != nil || fs.NArg() > 0 {
		fmt.Fprintf(stderr, "timerd: receiver takes only -listen host:port and -accept\n\n%s", usageText)
		return errUsage
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	var mu sync.Mutex // one line at a time
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(io.LimitReader(r.Body, maxReceivedBody))
			mu.Lock()
			attempt := r.Header.Get("X-Durable-Attempt")
			if attempt == "" {
				attempt = r.Header.Get("X-Rediswheel-Attempt") // a sender older than the rename
			}
			fmt.Fprintf(stdout, "%s %s %s Idempotency-Key=%s X-Durable-Attempt=%s traceparent=%s body=%s",
				time.Now().UTC().Format(time.RFC3339Nano), r.Method, r.URL.RequestURI(),
				strconv.Quote(r.Header.Get("Idempotency-Key")), attempt,
				r.Header.Get("Traceparent"), strconv.Quote(string(body)))
			if *accept {
				fmt.Fprintf(stdout, " X-Completion-Token=%s", r.Header.Get("X-Completion-Token"))
			}
			fmt.Fprintln(stdout)
			mu.Unlock()
			if *accept {
				w.WriteHeader(http.StatusAccepted)
			}
		})}
	answer := "200"
	if *accept {
		answer = "202 (complete each with timerd tasks complete KEY -completion-token T)"
	}
	fmt.Fprintf(stderr, "timerd receiver: listening on http://%s; every request is printed and answered %s\n", ln.Addr(), answer)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
