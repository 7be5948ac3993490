package config

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// env is a getenv over a map.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// fakeLookup answers "localhost" with loopback addresses and "public.test"
// with a public one, for checkListen, and is restored after t.
func fakeLookup(t *testing.T) {
	old := lookupHost
	lookupHost = func(ctx context.Context, network, host string) ([]netip.Addr, error) {
		switch host {
		case "localhost":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}, nil
		case "mixed.test":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("192.0.2.1")}, nil
		case "public.test":
			return []netip.Addr{netip.MustParseAddr("192.0.2.1")}, nil
		}
		return nil, errors.New("no such host")
	}
	t.Cleanup(func() { lookupHost = old })
}

func TestDefaults(t *testing.T) {
	c, err := Parse(nil, env(nil))
	require.NoError(t, err)
	require.Equal(t, Config{
		Listen: "127.0.0.1:8080", Store: StoreSQLite, StorePath: "timerd-data/timerd.db", DataDir: "timerd-data",
		Namespace: "timerd",
		Shards:    16, Concurrency: 64, Workers: true, MaxBody: 1 << 20, Rate: 1000,
		Retention: 24 * time.Hour, History: 10, ShutdownGrace: 30 * time.Second,
		Lease: 30 * time.Second, LogLevel: slog.LevelInfo,
		MaxAttempts: 25, BackoffBase: time.Second, BackoffLimit: time.Hour, CallbackTimeout: 30 * time.Second,
		Flow: defaultFlow, DefaultStore: true,
	}, c)
}

// Every setting from its flag, and the same from its variable: the flag
// wins over the variable, the variable over the default.
func TestEverySetting(t *testing.T) {
	want := Config{
		Listen: "127.0.0.1:9000", Store: StoreRedis, RedisURL: "redis://:pw@10.0.0.1:6380/2", Namespace: "orders",
		DataDir: "/var/lib/timerd",
		Shards:  32, Concurrency: 8, Workers: false, AllowCallback: []string{"10.0.0.0/8", "hooks.internal:8443"},
		MaxBody: 512 << 10, Rate: 2.5, Retention: time.Hour, History: 3, ShutdownGrace: 5 * time.Second,
		Lease: 2 * time.Second, LogLevel: slog.LevelDebug, RedisCluster: true,
		MaxAttempts: 3, BackoffBase: 10 * time.Millisecond, BackoffLimit: time.Minute, CallbackTimeout: 2 * time.Second,
		Flow: defaultFlow,
	}
	flags := []string{"-listen", "127.0.0.1:9000", "-redis-url", "redis://:pw@10.0.0.1:6380/2", "-redis-cluster",
		"-data-dir", "/var/lib/timerd", "-namespace", "orders", "-shards", "32", "-concurrency", "8", "-workers=false",
		"-allow-callback", "10.0.0.0/8, hooks.internal:8443", "-max-body", "512KiB", "-rate", "2.5",
		"-retention", "1h", "-history", "3", "-shutdown-grace", "5s", "-lease", "2s", "-log-level", "debug",
		"-max-attempts", "3", "-backoff-base", "10ms", "-backoff-limit", "1m", "-callback-timeout", "2s"}
	vars := map[string]string{"TIMERD_LISTEN": "127.0.0.1:9000", "TIMERD_REDIS_URL": "redis://:pw@10.0.0.1:6380/2",
		"TIMERD_REDIS_CLUSTER": "true", "TIMERD_DATA_DIR": "/var/lib/timerd", "TIMERD_NAMESPACE": "orders", "TIMERD_SHARDS": "32",
		"TIMERD_CONCURRENCY": "8", "TIMERD_WORKERS": "false", "TIMERD_ALLOW_CALLBACK": "10.0.0.0/8,hooks.internal:8443",
		"TIMERD_MAX_BODY": "524288", "TIMERD_RATE": "2.5", "TIMERD_RETENTION": "1h", "TIMERD_HISTORY": "3",
		"TIMERD_SHUTDOWN_GRACE": "5s", "TIMERD_LEASE": "2s", "TIMERD_LOG_LEVEL": "DEBUG",
		"TIMERD_MAX_ATTEMPTS": "3", "TIMERD_BACKOFF_BASE": "10ms", "TIMERD_BACKOFF_LIMIT": "1m", "TIMERD_CALLBACK_TIMEOUT": "2s"}

	got, err := Parse(flags, env(nil))
	require.NoError(t, err)
	require.Equal(t, want, got, "flags")

	got, err = Parse(nil, env(vars))
	require.NoError(t, err)
	require.Equal(t, want, got, "environment")

	other := map[string]string{}
	for k := range vars {
		other[k] = "bad"
	}
	got, err = Parse(flags, env(other))
	require.NoError(t, err, "a flag given must hide a bad variable")
	require.Equal(t, want, got, "flags over environment")
}

func TestToken(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(file, []byte("  s3cret \r\nsecond line\n"), 0o600))
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, []byte("\nsecond\n"), 0o600))

	for _, tc := range []struct {
		name string
		args []string
		vars map[string]string
		want string
		err  string
	}{
		{name: "none", want: ""},
		{name: "env", vars: map[string]string{"TIMERD_TOKEN": "envtok"}, want: "envtok"},
		{name: "file flag: first line, trimmed", args: []string{"-token-file", file}, want: "s3cret"},
		{name: "file env", vars: map[string]string{"TIMERD_TOKEN_FILE": file}, want: "s3cret"},
		{name: "file wins over TIMERD_TOKEN", args: []string{"-token-file", file},
			vars: map[string]string{"TIMERD_TOKEN": "envtok"}, want: "s3cret"},
		{name: "missing file", args: []string{"-token-file", filepath.Join(dir, "nope")}, err: "-token-file"},
		{name: "empty first line", args: []string{"-token-file", empty}, err: "-token-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.args, env(tc.vars))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, c.Token)
		})
	}
}

// A non-loopback listen address needs a token; loopback ones do not.
func TestListenNeedsToken(t *testing.T) {
	fakeLookup(t)
	for _, tc := range []struct {
		listen   string
		loopback bool
	}{
		{"127.0.0.1:8080", true},
		{"127.9.9.9:1", true},
		{"[::1]:8080", true},
		{"[::ffff:127.0.0.1]:8080", true},
		{"localhost:8080", true},
		{":8080", false},
		{"0.0.0.0:8080", false},
		{"[::]:8080", false},
		{"192.0.2.1:8080", false},
		{"public.test:8080", false},
		{"mixed.test:8080", false},
	} {
		t.Run(tc.listen, func(t *testing.T) {
			_, err := Parse([]string{"-listen", tc.listen}, env(nil))
			if tc.loopback {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrNoToken)
			}
			_, err = Parse([]string{"-listen", tc.listen}, env(map[string]string{"TIMERD_TOKEN": "t"}))
			require.NoError(t, err, "with a token any address will do")
		})
	}
}

// Every bad value is refused with an error naming its flag.
func TestBadValues(t *testing.T) {
	fakeLookup(t)
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"-listen", "8080"}, "-listen"},
		{[]string{"-listen", "127.0.0.1:http"}, "-listen"},
		{[]string{"-listen", "127.0.0.1:70000"}, "-listen"},
		{[]string{"-listen", "nosuch.test:80"}, "-listen"},
		{[]string{"-redis-url", "http://x"}, "-redis-url"},
		{[]string{"-redis-url", "redis://x:6379/notadb"}, "-redis-url"},
		{[]string{"-redis-cluster=maybe"}, "-redis-cluster"},
		{[]string{"-store", "mysql://h/db"}, "-store"},
		{[]string{"-store", "sqlite:"}, "-store"},
		{[]string{"-store", "redis://x:6379/notadb"}, "-store (TIMERD_STORE)"},
		{[]string{"-store", "postgres://h/db", "-redis-url", "redis://h:6379/0"}, "-store"},
		{[]string{"-data-dir", ""}, "-data-dir"},
		{[]string{"-namespace", ""}, "-namespace"},
		{[]string{"-namespace", "a{b}"}, "-namespace"},
		{[]string{"-namespace", strings.Repeat("n", 129)}, "-namespace"},
		{[]string{"-shards", "0"}, "-shards"},
		{[]string{"-shards", "1025"}, "-shards"},
		{[]string{"-shards", "x"}, "-shards"},
		{[]string{"-concurrency", "0"}, "-concurrency"},
		{[]string{"-workers=sometimes"}, "-workers"},
		{[]string{"-allow-callback", "10.0.0.0/33"}, "-allow-callback"},
		{[]string{"-allow-callback", "10.0.0.1"}, "-allow-callback"},
		{[]string{"-allow-callback", "host:0"}, "-allow-callback"},
		{[]string{"-max-body", "0"}, "-max-body"},
		{[]string{"-max-body", "1MB"}, "-max-body"},
		{[]string{"-max-body", "-1"}, "-max-body"},
		{[]string{"-max-body", "99999999999GiB"}, "-max-body"},
		{[]string{"-rate", "-1"}, "-rate"},
		{[]string{"-rate", "NaN"}, "-rate"},
		{[]string{"-rate", "+Inf"}, "-rate"},
		{[]string{"-retention", "-1s"}, "-retention"},
		{[]string{"-retention", "1d"}, "-retention"},
		{[]string{"-history", "0"}, "-history"},
		{[]string{"-max-attempts", "0"}, "-max-attempts"},
		{[]string{"-backoff-base", "0s"}, "-backoff-base"},
		{[]string{"-backoff-limit", "1ns"}, "-backoff-limit"},
		{[]string{"-backoff-base", "2s", "-backoff-limit", "1s"}, "-backoff-limit"},
		{[]string{"-callback-timeout", "0s"}, "-callback-timeout"},
		{[]string{"-history", "1001"}, "-history"},
		{[]string{"-shutdown-grace", "soon"}, "-shutdown-grace"},
		{[]string{"-lease", "50ms"}, "-lease"},
		{[]string{"-log-level", "loud"}, "-log-level"},
		{[]string{"-no-such-flag"}, "-no-such-flag"},
		{[]string{"extra"}, "extra"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := Parse(tc.args, env(nil))
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.flag)
			require.NotErrorIs(t, err, ErrNoToken)
		})
	}
}

// A bad value from the environment names the flag and the variable.
func TestBadEnvNamesBoth(t *testing.T) {
	_, err := Parse(nil, env(map[string]string{"TIMERD_SHARDS": "many"}))
	require.ErrorContains(t, err, "-shards")
	require.ErrorContains(t, err, "TIMERD_SHARDS")
}

// The password in a Redis URL is not repeated in an error.
func TestRedisURLErrorHidesPassword(t *testing.T) {
	_, err := Parse([]string{"-redis-url", "redis://u:hunter2@h:6379/x"}, env(nil))
	require.ErrorContains(t, err, "-redis-url")
	require.NotContains(t, err.Error(), "hunter2")
}

// -store names the store by its URL's scheme; without it timerd keeps its
// tasks in a SQLite file in -data-dir, unless -redis-url (from before
// -store) is given.
func TestStore(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want Config
	}{
		{nil, Config{Store: StoreSQLite, StorePath: "timerd-data/timerd.db"}},
		{[]string{"-data-dir", "/d"}, Config{Store: StoreSQLite, StorePath: "/d/timerd.db"}},
		{[]string{"-store", "sqlite"}, Config{Store: StoreSQLite, StorePath: "timerd-data/timerd.db"}},
		{[]string{"-store", "sqlite:/tmp/x.db"}, Config{Store: StoreSQLite, StorePath: "/tmp/x.db"}},
		{[]string{"-store", "redis://h:1/0"}, Config{Store: StoreRedis, RedisURL: "redis://h:1/0"}},
		{[]string{"-store", "rediss://h:1/0"}, Config{Store: StoreRedis, RedisURL: "rediss://h:1/0"}},
		{[]string{"-redis-url", "redis://h:1/0"}, Config{Store: StoreRedis, RedisURL: "redis://h:1/0"}},
		{[]string{"-store", "postgres://u@h/db"}, Config{Store: StorePostgres, StoreURL: "postgres://u@h/db"}},
		{[]string{"-store", "postgresql://u@h/db"}, Config{Store: StorePostgres, StoreURL: "postgresql://u@h/db"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			c, err := Parse(tc.args, env(nil))
			require.NoError(t, err)
			got := Config{Store: c.Store, StorePath: c.StorePath, StoreURL: c.StoreURL, RedisURL: c.RedisURL}
			require.Equal(t, tc.want, got)
		})
	}
}

// The store URL from a file (-store-file, TIMERD_STORE_FILE), so that its
// password is in neither the command line (ps shows it to every user) nor
// the environment: its first line, trimmed, is -store's value; the start-up
// log shows the file and the URL without its password; a file and -store
// (or TIMERD_STORE) together, a missing file and an empty first line are
// errors that repeat no URL.
func TestStoreFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	pg := write("store", "postgres://timerd:hunter2@db.internal:5432/tasks?sslmode=verify-full\nignored\n")
	for _, parse := range []func() (Config, error){
		func() (Config, error) { return Parse([]string{"-store-file", pg}, env(nil)) },
		func() (Config, error) { return Parse(nil, env(map[string]string{"TIMERD_STORE_FILE": pg})) },
	} {
		c, err := parse()
		require.NoError(t, err)
		require.Equal(t, StorePostgres, c.Store)
		require.Equal(t, "postgres://timerd:hunter2@db.internal:5432/tasks?sslmode=verify-full", c.StoreURL)
		require.False(t, c.DefaultStore, "a store file names the store")
		attrs := map[string]string{}
		for _, a := range c.Attrs() {
			attrs[a.Key] = a.Value.String()
		}
		require.Equal(t, pg, attrs["store-file"])
		require.NotContains(t, fmt.Sprint(attrs), "hunter2")
	}
	c, err := Parse([]string{"-store-file", write("redis", "  rediss://:hunter2@cache:6380/0  \n")}, env(nil))
	require.NoError(t, err)
	require.Equal(t, "rediss://:hunter2@cache:6380/0", c.RedisURL)

	_, err = Parse([]string{"-store-file", write("baddb", "redis://:hunter2@cache:6379/notadb")}, env(nil))
	require.ErrorContains(t, err, "config: -store-file (TIMERD_STORE_FILE): ", "the setting that gave the URL")
	require.NotContains(t, err.Error(), "hunter2")

	for name, tc := range map[string]struct {
		args []string
		vars map[string]string
	}{
		"flag and flag":     {[]string{"-store", "sqlite", "-store-file", pg}, nil},
		"variable and flag": {[]string{"-store-file", pg}, map[string]string{"TIMERD_STORE": "postgres://u:hunter2@h/db"}},
		"no such file":      {[]string{"-store-file", filepath.Join(dir, "none")}, nil},
		"empty first line":  {[]string{"-store-file", write("empty", "\npostgres://u:hunter2@h/db\n")}, nil},
		"not a store":       {[]string{"-store-file", write("mysql", "mysql://u:hunter2@h/db")}, nil},
	} {
		_, err := Parse(tc.args, env(tc.vars))
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), "hunter2", name)
	}
}

// A password in a store URL is not repeated in an error.
func TestStoreErrorHidesPassword(t *testing.T) {
	_, err := Parse([]string{"-store", "mysql://u:hunter2@h/db"}, env(nil))
	require.ErrorContains(t, err, "-store")
	require.NotContains(t, err.Error(), "hunter2")
}

func TestHelp(t *testing.T) {
	_, err := Parse([]string{"-h"}, env(nil))
	require.ErrorIs(t, err, flag.ErrHelp)
	var b strings.Builder
	Usage(&b)
	for _, s := range settings {
		require.Contains(t, b.String(), "-"+s.name+" ("+s.env)
	}
}

// Attrs, the start-up log's settings, name every setting and show its
// effective value, but never the token or the Redis password.
func TestAttrs(t *testing.T) {
	c, err := Parse([]string{"-redis-url", "redis://user:s3cretpw@127.0.0.1:6379/0", "-allow-callback", "127.0.0.1/32",
		"-max-attempts", "7", "-backoff-base", "250ms", "-backoff-limit", "2m", "-callback-timeout", "5s"},
		env(map[string]string{"TIMERD_TOKEN": "tok3n", "TIMERD_LEASE": "9s"}))
	require.NoError(t, err)
	got := map[string]string{}
	for _, a := range c.Attrs() {
		got[a.Key] = a.Value.String()
	}
	for _, s := range settings {
		name := s.name
		if name == "token-file" {
			name = "token"
		}
		require.Contains(t, got, name, "the start-up log must show -%s", s.name)
	}
	require.Len(t, got, len(settings), "one attribute per setting: %v", got)
	require.Equal(t, "127.0.0.1/32", got["allow-callback"])
	require.Equal(t, "9s", got["lease"])
	require.Equal(t, "7", got["max-attempts"])
	require.Equal(t, "250ms", got["backoff-base"])
	require.Equal(t, "2m0s", got["backoff-limit"])
	require.Equal(t, "5s", got["callback-timeout"])
	require.Equal(t, "true", got["token"])
	require.Equal(t, "redis://user:xxxxx@127.0.0.1:6379/0", got["redis-url"])
	require.Equal(t, "redis://user:xxxxx@127.0.0.1:6379/0", got["store"])
	require.NotContains(t, fmt.Sprint(got), "tok3n")
	require.NotContains(t, fmt.Sprint(got), "s3cretpw")

	c, err = Parse([]string{"-store", "postgres://app:s3cretpw@db/tasks"}, env(nil))
	require.NoError(t, err)
	for _, a := range c.Attrs() {
		got[a.Key] = a.Value.String()
	}
	require.Equal(t, "postgres://app:xxxxx@db/tasks", got["store"])
	require.NotContains(t, fmt.Sprint(got), "s3cretpw")
	c, err = Parse([]string{"-data-dir", "/d"}, env(nil))
	require.NoError(t, err)
	for _, a := range c.Attrs() {
		got[a.Key] = a.Value.String()
	}
	require.Equal(t, "sqlite:/d/timerd.db", got["store"])
}
