package cli

import (
	"fmt"
	"io"
	"strings"
)

// apiCommand is one command that calls the API: its name (group and
// subcommand, or one word: single), what follows the name in its usage line, what it does, its
// own flags and how many arguments it takes (-1: runAPI checks).
type apiCommand struct {
	name, args, what string
	flags            []string
	nargs            int
}

// apiCommands are the API commands, in the order the usage lists them.
var apiCommands = []apiCommand{
	{"tasks get", "KEY", "a task, as GET /v1/tasks/{key}", nil, 1},
	{"tasks cancel", "KEY", "cancel it, as DELETE /v1/tasks/{key}", nil, 1},
	{"tasks list", "-state S [-kind K] [-prefix P] [-error E] [-limit N] [-cursor C]", "one page of a state (scheduled, retrying, in_flight, dead, done, cancelled); with -kind, -prefix or -error a page of a search, which next_cursor continues", []string{"state", "kind", "prefix", "error", "limit", "cursor"}, 0},
	{"tasks reschedule", "KEY -delay D | -at T", "move a scheduled or retrying task, as POST /v1/tasks/{key}/reschedule", []string{"delay", "at"}, 1},
	{"tasks complete", "KEY -completion-token T", "finish a task waiting on a 202, as POST /v1/tasks/{key}/complete", []string{"completion-token"}, 1},
	{"tasks fail", "KEY -completion-token T [-error E] [-permanent]", "fail it: retried after its backoff, or dead with -permanent, as POST /v1/tasks/{key}/fail", []string{"completion-token", "error", "permanent"}, 1},
	{"dead requeue", "KEY | -all [-kind K] [-prefix P] [-error E]", "requeue one dead task, or every dead task (that the filters match) page by page", []string{"all", "kind", "prefix", "error"}, -1},
	{"schedules list", "", "the periodic schedules", nil, 0},
	{"schedules get", "NAME", "one schedule, as GET /v1/schedules/{name}", nil, 1},
	{"schedules put", "-file F", "create or replace the schedule in file F (the JSON of POST /v1/schedules)", []string{"file"}, 0},
	{"schedules delete", "NAME", "delete it, as DELETE /v1/schedules/{name}", nil, 1},
	{"stats", "", "tasks per state, per shard and in total, and whether paused, as GET /v1/stats", nil, 0},
	{"pause", "", "pause deliveries on every shard, as POST /v1/pause", nil, 0},
	{"resume", "", "resume them, as POST /v1/resume", nil, 0},
}

// single reports whether the command named word is one word (stats,
// pause, resume) rather than a group of subcommands.
func single(word string) bool {
	for _, c := range apiCommands {
		if c.name == word {
			return true
		}
	}
	return false
}

// commonFlags are the flags every API command takes.
var commonFlags = []string{"server", "token-file"}

// flagDocs describe the flags, as "-name ARG" and what it is.
var flagDocs = map[string][2]string{
	"server":           {"-server URL", "timerd's address (TIMERD_SERVER, default http://127.0.0.1:8080)"},
	"token-file":       {"-token-file F", "file whose first line is the token (TIMERD_TOKEN_FILE; else TIMERD_TOKEN)"},
	"state":            {"-state S", "the state to list (required)"},
	"limit":            {"-limit N", "tasks a page (default: the API's)"},
	"cursor":           {"-cursor C", "the next_cursor of the page before"},
	"all":              {"-all", "every dead task, instead of KEY"},
	"delay":            {"-delay D", "due in D from now, a Go duration (1m30s)"},
	"at":               {"-at T", "due at T, RFC 3339 with a zone (2026-11-25T10:00:00Z)"},
	"completion-token": {"-completion-token T", "the X-Completion-Token header the callback received (required)"},
	"error":            {"-error E", "tasks fail: the failure's text, its last error; a filter: text in the last error, ignoring case"},
	"kind":             {"-kind K", "a filter: oneoff tasks, schedule runs (schedule), or all"},
	"prefix":           {"-prefix P", "a filter: keys starting with P"},
	"permanent":        {"-permanent", "dead at once instead of retried"},
	"file":             {"-file F", "the schedule's JSON (required)"},
	"listen":           {"-listen ADDR", "host:port to listen on (default 127.0.0.1:9000)"},
}

const receiverLine = "receiver [-listen ADDR] [-accept]"

const exitCodes = "Exit codes: 0 done, 1 the request failed (the API's status and code are printed), 2 bad usage.\n"

// usageText is printed for a bad command line: every command.
var usageText = func() string {
	var b strings.Builder
	b.WriteString("usage: timerd COMMAND [flags] [args]\n\n")
	for _, c := range apiCommands {
		line(&b, c.name+" "+c.args, c.what)
	}
	line(&b, receiverLine, "a callback receiver for trying timerd: prints each request, answers 200")
	b.WriteString("\nFlags of the API commands (before, between or after the arguments):\n")
	flags(&b, commonFlags)
	b.WriteString("\ntimerd COMMAND -h shows one command's flags.\n" + exitCodes)
	return b.String()
}()

// line writes one command's usage line, its description beside it or, for
// a long one, under it.
func line(b *strings.Builder, usage, what string) {
	usage = "  timerd " + strings.TrimSpace(usage)
	if len(usage) > 38 {
		fmt.Fprintf(b, "%s\n%39s%s\n", usage, "", what)
		return
	}
	fmt.Fprintf(b, "%-39s%s\n", usage, what)
}

func flags(b *strings.Builder, names []string) {
	for _, n := range names {
		d := flagDocs[n]
		fmt.Fprintf(b, "  %-19s %s\n", d[0], d[1])
	}
}

// Help writes the usage of what names (a command's words, as in
// "timerd help tasks list") to w: one command with its own flags and the
// common ones, or a group's commands, or, for nothing it knows, every
// command. It reports whether it knew what.
func Help(w io.Writer, what ...string) bool {
	name := strings.Join(what, " ")
	var b strings.Builder
	if name == "receiver" {
		b.WriteString("usage: timerd " + receiverLine + "\n\n  a callback receiver for trying timerd: prints each request, answers 200\n\n")
		flags(&b, []string{"listen", "accept"})
		_, _ = io.WriteString(w, b.String())
		return true
	}
	for _, c := range apiCommands {
		if c.name == name {
			fmt.Fprintf(&b, "usage: timerd %s\n\n  %s\n\n", strings.TrimSpace(c.name+" "+c.args), c.what)
			flags(&b, append(append([]string(nil), c.flags...), commonFlags...))
			b.WriteString("\n" + exitCodes)
			_, _ = io.WriteString(w, b.String())
			return true
		}
	}
	var group []apiCommand
	for _, c := range apiCommands {
		if g, _, _ := strings.Cut(c.name, " "); g == name {
			group = append(group, c)
		}
	}
	if len(group) == 0 {
		_, _ = io.WriteString(w, usageText)
		return false
	}
	fmt.Fprintf(&b, "usage: timerd %s SUBCOMMAND [flags] [args]\n\n", name)
	for _, c := range group {
		line(&b, c.name+" "+c.args, c.what)
	}
	b.WriteString("\nFlags of every one:\n")
	flags(&b, commonFlags)
	fmt.Fprintf(&b, "\ntimerd %s SUBCOMMAND -h shows its own flags.\n", name)
	_, _ = io.WriteString(w, b.String())
	return true
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}
