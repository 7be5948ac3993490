// Command timerdload load-tests a running timerd through its HTTP API and prints a markdown table.
// See package timerdload for what each column measures; bench/timerd.sh starts Redis and timerd
// and runs it.
//
//	timerdload -url http://127.0.0.1:8080 -token-file .timerd/token
//
// timerd must allow callbacks to the receiver's address (-allow-callback 127.0.0.1/32).
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/go-timingwheel/timingwheel/bench/timerdload"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:8080", "timerd's base URL")
	tokenFile := flag.String("token-file", "", "file whose first line is timerd's token (default $TIMERD_TOKEN)")
	recv := flag.String("receiver", "127.0.0.1:0", "address the callbacks are sent to")
	tasks := flag.Int("tasks", 5000, "tasks in the creates and deliveries workloads")
	spreadTasks := flag.Int("spread-tasks", 5000, "tasks in the lateness workload")
	spread := flag.Duration("spread", 10*time.Second, "the lateness workload's tasks are due evenly over this")
	clients := flag.Int("clients", 32, "goroutines calling the API")
	flag.Parse()

	token := os.Getenv("TIMERD_TOKEN")
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			fail(err)
		}
		token, _, _ = strings.Cut(string(b), "\n")
		token = strings.TrimSpace(token)
	}
	ln, err := net.Listen("tcp", *recv)
	if err != nil {
		fail(err)
	}
	res, err := timerdload.Run(context.Background(), timerdload.Config{
		BaseURL: *base, Token: token, Receiver: ln,
		Tasks: *tasks, SpreadTasks: *spreadTasks, Spread: *spread, Clients: *clients,
	})
	if err != nil {
		fail(err)
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }
	fmt.Printf("%d tasks (creates, deliveries); %d tasks due over %v (lateness); %d API clients; %s; GOMAXPROCS %d\n\n",
		*tasks, *spreadTasks, *spread, *clients, runtime.Version(), runtime.GOMAXPROCS(0))
	fmt.Println("| creates/s | create p50 | create p99 | cancels/s | delivered/s | lateness p50 | p90 | p99 | max | early | duplicates |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	fmt.Printf("| %.0f | %s | %s | %.0f | %.0f | %s | %s | %s | %s | %d | %d |\n",
		res.CreatesPerSec, ms(res.CreateP50), ms(res.CreateP99), res.CancelsPerSec, res.DeliveredPerSec,
		ms(res.LatenessP50), ms(res.LatenessP90), ms(res.LatenessP99), ms(res.LatenessMax), res.Early, res.Duplicates)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "timerdload:", err)
	os.Exit(1)
}
