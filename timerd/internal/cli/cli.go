// Package cli is timerd's command line for operators: subcommands of the
// same binary that call a running timerd's /v1/ API with its token
// (README.md, "Command line"). It has no access to the store of its own, so it
// can do exactly what the API allows, with the same checks.
//
// Exit codes: 0 done; 1 the request failed (an API error, printed with its
// status and code, or no answer); 2 bad usage.
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
	"strings"
	"time"
)

// Commands are the first words that select the command line rather than
// the server.
var Commands = []string{"tasks", "dead", "schedules", "stats", "pause", "resume", "receiver"}

// IsCommand reports whether arg, timerd's first argument, names a command.
func IsCommand(arg string) bool {
	for _, c := range Commands {
		if arg == c {
			return true
		}
	}
	return false
}

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// errUsage is a usage mistake, already explained to the user.
var errUsage = errors.New("usage")

// requestTimeout bounds one API request: the API answers within its own
// write timeout (60s), so a longer wait means no answer.
const requestTimeout = 70 * time.Second

// Run runs the command of args (args[0] is one of Commands) and returns the
// exit code. Answers go to stdout, errors to stderr.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var err error
	switch args[0] {
	case "receiver":
		err = runReceiver(ctx, args[1:], stdout, stderr)
	default:
		err = runAPI(ctx, args, getenv, stdout, stderr)
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errUsage):
		return exitUsage
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	}
	fmt.Fprintf(stderr, "timerd %s: %v\n", args[0], err)
	return exitFailed
}

// client calls one timerd's API.
type client struct {
	base  *url.URL
	token string
	http  *http.Client
}

// apiError is an API error answer.
type apiError struct {
	Status               int
	Code, Message, Field string
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
	if e.Field != "" {
		s += " (field " + e.Field + ")"
	}
	return s
}

// do sends method path (already escaped) with body (JSON or nil) and
// decodes a 2xx answer into out (nil: discard); any other answer is an
// *apiError.
func (c *client) do(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = strings.NewReader(string(b))
	}
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	target, err := url.Parse(strings.TrimSuffix(c.base.String(), "/") + path)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, target.String(), r)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error struct{ Code, Message, Field string } `json:"error"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Error.Code == "" {
			return &apiError{Status: resp.StatusCode, Code: "?", Message: strings.TrimSpace(string(raw))}
		}
		return &apiError{resp.StatusCode, e.Error.Code, e.Error.Message, e.Error.Field}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the API's JSON: %v", method, path, err)
	}
	return nil
}

// newClient reads the common flags' values: the server URL and the token,
// as the server reads its own (-token-file, else TIMERD_TOKEN).
func newClient(server, tokenFile string, getenv func(string) string) (*client, error) {
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("-server %q: want an http or https URL such as http://127.0.0.1:8080", server)
	}
	token := getenv("TIMERD_TOKEN")
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, fmt.Errorf("-token-file: %w", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		if token = strings.TrimSpace(line); token == "" {
			return nil, fmt.Errorf("-token-file %s: the first line is empty", tokenFile)
		}
	}
	return &client{base: u, token: token, http: &http.Client{}}, nil
}
