package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
)

// runAPI runs the commands that call the API.
func runAPI(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	usage := func(format string, a ...any) error {
		fmt.Fprintf(stderr, "timerd: "+format+"\n\n%s", append(a, usageText)...)
		return errUsage
	}
	if len(args) >= 2 && isHelp(args[1]) {
		Help(stdout, args[0])
		return flag.ErrHelp
	}
	cmd, rest := args[0], args[1:]
	if !single(cmd) {
		if len(args) < 2 {
			return usage("%s needs a subcommand", args[0])
		}
		cmd, rest = args[0]+" "+args[1], args[2:]
	}
	fs := flag.NewFlagSet("timerd "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	server := fs.String("server", envOr(getenv, "TIMERD_SERVER", "http://127.0.0.1:8080"), "")
	tokenFile := fs.String("token-file", getenv("TIMERD_TOKEN_FILE"), "")
	state := fs.String("state", "", "")
	limit := fs.Int("limit", 0, "")
	cursor := fs.String("cursor", "", "")
	all := fs.Bool("all", false, "")
	delay := fs.String("delay", "", "")
	at := fs.String("at", "", "")
	completionToken := fs.String("completion-token", "", "")
	failure := fs.String("error", "", "")
	permanent := fs.Bool("permanent", false, "")
	file := fs.String("file", "", "")
	kind := fs.String("kind", "", "")
	prefix := fs.String("prefix", "", "")
	pos, err := parseInterleaved(fs, rest)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			if !Help(stdout, cmd) {
				Help(stdout, args[0])
			}
			return err
		}
		return usage("%s: %v", cmd, err)
	}
	// Which flags each command takes, and how many arguments.
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var spec apiCommand
	for _, c := range apiCommands {
		if c.name == cmd {
			spec = c
		}
	}
	if spec.name == "" {
		return usage("unknown command %q", cmd)
	}
	for name := range given {
		if !contains(commonFlags, name) && !contains(spec.flags, name) {
			return usage("%s does not take -%s", cmd, name)
		}
	}
	switch {
	case spec.nargs >= 0 && len(pos) != spec.nargs:
		return usage("%s takes %d argument(s), not %d", cmd, spec.nargs, len(pos))
	case cmd == "dead requeue" && (*all == (len(pos) == 1) || len(pos) > 1):
		return usage("dead requeue takes one KEY, or -all")
	case cmd == "dead requeue" && !*all && (given["kind"] || given["prefix"] || given["error"]):
		return usage("dead requeue takes -kind, -prefix and -error only with -all")
	case cmd == "tasks list" && *state == "":
		return usage("tasks list needs -state")
	case cmd == "tasks reschedule" && given["delay"] == given["at"]:
		return usage("tasks reschedule takes one of -delay and -at")
	case (cmd == "tasks complete" || cmd == "tasks fail") && *completionToken == "":
		return usage("%s needs -completion-token (the X-Completion-Token header the callback received)", cmd)
	case cmd == "schedules put" && *file == "":
		return usage("schedules put needs -file")
	}
	c, err := newClient(*server, *tokenFile, getenv)
	if err != nil {
		return usage("%v", err)
	}
	var key string
	if len(pos) > 0 {
		key = pos[0]
	}
	switch cmd {
	case "tasks get":
		return c.print(ctx, stdout, http.MethodGet, "/v1/tasks/"+url.PathEscape(key), nil)
	case "tasks cancel":
		return c.print(ctx, stdout, http.MethodDelete, "/v1/tasks/"+url.PathEscape(key), nil)
	case "tasks list":
		q := url.Values{"state": {*state}}
		if given["limit"] {
			q.Set("limit", strconv.Itoa(*limit))
		}
		if *cursor != "" {
			q.Set("cursor", *cursor)
		}
		for name, v := range map[string]string{"kind": *kind, "prefix": *prefix, "error": *failure} {
			if given[name] {
				q.Set(name, v)
			}
		}
		return c.print(ctx, stdout, http.MethodGet, "/v1/tasks?"+q.Encode(), nil)
	case "tasks reschedule":
		body := map[string]string{"delay": *delay}
		if given["at"] {
			body = map[string]string{"due_at": *at}
		}
		return c.print(ctx, stdout, http.MethodPost, "/v1/tasks/"+url.PathEscape(key)+"/reschedule", body)
	case "tasks complete":
		return c.print(ctx, stdout, http.MethodPost, "/v1/tasks/"+url.PathEscape(key)+"/complete",
			map[string]string{"token": *completionToken})
	case "tasks fail":
		return c.print(ctx, stdout, http.MethodPost, "/v1/tasks/"+url.PathEscape(key)+"/fail",
			map[string]any{"token": *completionToken, "error": *failure, "permanent": *permanent})
	case "dead requeue":
		if *all {
			f := url.Values{}
			for name, v := range map[string]string{"kind": *kind, "prefix": *prefix, "error": *failure} {
				if given[name] {
					f.Set(name, v)
				}
			}
			return c.requeueAll(ctx, stdout, f)
		}
		return c.print(ctx, stdout, http.MethodPost, "/v1/dead/"+url.PathEscape(key)+"/requeue", nil)
	case "schedules get":
		return c.print(ctx, stdout, http.MethodGet, "/v1/schedules/"+url.PathEscape(key), nil)
	case "schedules put":
		b, err := os.ReadFile(*file)
		if err != nil {
			return usage("-file: %v", err)
		}
		if !json.Valid(b) {
			return usage("-file %s: not JSON", *file)
		}
		return c.print(ctx, stdout, http.MethodPost, "/v1/schedules", json.RawMessage(b))
	case "schedules delete":
		return c.print(ctx, stdout, http.MethodDelete, "/v1/schedules/"+url.PathEscape(key), nil)
	case "stats":
		return c.print(ctx, stdout, http.MethodGet, "/v1/stats", nil)
	case "pause":
		return c.print(ctx, stdout, http.MethodPost, "/v1/pause", nil)
	case "resume":
		return c.print(ctx, stdout, http.MethodPost, "/v1/resume", nil)
	default: // schedules list
		return c.print(ctx, stdout, http.MethodGet, "/v1/schedules", nil)
	}
}

// print calls the API and writes its answer, indented, to w.
func (c *client) print(ctx context.Context, w io.Writer, method, path string, body any) error {
	var out json.RawMessage
	if err := c.do(ctx, method, path, body, &out); err != nil {
		return err
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// requeueAll requeues every dead task, or with filters (kind, prefix,
// error) every one they match: it walks the dead set page by page, oldest
// death first (GET /v1/dead; with filters the search GET /v1/tasks?state=dead,
// whose pages read a bounded number of tasks each), and requeues each task,
// one request each. The cursor
// is a position, so requeued tasks leaving the set do not disturb the walk,
// and a task that dies during it is met later in it. A task gone meanwhile
// (404: requeued or cancelled by someone else) is counted, not an error.
func (c *client) requeueAll(ctx context.Context, w io.Writer, filters url.Values) error {
	requeued, gone, cursor := 0, 0, ""
	for {
		var page struct {
			Tasks []struct {
				Key string `json:"key"`
			} `json:"tasks"`
			NextCursor string `json:"next_cursor"`
		}
		q := url.Values{"limit": {"1000"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		list := "/v1/dead?"
		if len(filters) > 0 {
			for k, v := range filters {
				q[k] = v
			}
			q.Set("state", "dead")
			list = "/v1/tasks?"
		}
		if err := c.do(ctx, http.MethodGet, list+q.Encode(), nil, &page); err != nil {
			return fmt.Errorf("after %d requeued: %w", requeued, err)
		}
		for _, t := range page.Tasks {
			err := c.do(ctx, http.MethodPost, "/v1/dead/"+url.PathEscape(t.Key)+"/requeue", nil, nil)
			var e *apiError
			switch {
			case errors.As(err, &e) && e.Status == http.StatusNotFound:
				gone++
			case err != nil:
				return fmt.Errorf("requeue %q, after %d requeued: %w", t.Key, requeued, err)
			default:
				requeued++
			}
		}
		if cursor = page.NextCursor; cursor == "" {
			_, err := fmt.Fprintf(w, "requeued %d dead task(s); %d were gone meanwhile\n", requeued, gone)
			return err
		}
	}
}

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// parseInterleaved parses args with fs, flags before, between or after the
// arguments (timerd tasks get KEY -token-file F works as well as with the
// flag first), and returns the arguments. Everything after "--" is an
// argument, for a key that starts with '-'.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos, afterDash []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, afterDash = args[:i], args[i+1:]
	}
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return append(pos, afterDash...), nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
