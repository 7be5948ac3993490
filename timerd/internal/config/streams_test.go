package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStreamSettings(t *testing.T) {
	want := Streams{RedisURL: "redis://:pw@10.0.0.2:6379/1?addr=10.0.0.3:6379", RedisCluster: true, MaxLen: 100000}
	got, err := Parse([]string{"-stream-redis-url", want.RedisURL, "-stream-redis-cluster", "-stream-max-len", "100000"}, env(nil))
	require.NoError(t, err)
	require.Equal(t, want, got.Streams, "flags")
	got, err = Parse(nil, env(map[string]string{"TIMERD_STREAM_REDIS_URL": want.RedisURL,
		"TIMERD_STREAM_REDIS_CLUSTER": "true", "TIMERD_STREAM_MAX_LEN": "100000"}))
	require.NoError(t, err)
	require.Equal(t, want, got.Streams, "environment")

	for _, args := range [][]string{
		{"-stream-redis-url", "http://x"},
		{"-stream-redis-url", "redis://x:6379/notadb"},
		{"-stream-redis-cluster=maybe"},
		{"-stream-redis-cluster"}, // without -stream-redis-url: the store's Redis has -redis-cluster
		{"-stream-max-len", "-1"},
		{"-stream-max-len", "many"},
	} {
		_, err := Parse(args, env(nil))
		require.Error(t, err, args)
		flag, _, _ := strings.Cut(args[0], "=")
		require.Contains(t, err.Error(), flag, "the error names the flag")
		require.Contains(t, err.Error(), strings.ToUpper(strings.ReplaceAll("timerd_"+flag[1:], "-", "_")), "and its variable")
	}
	_, err = Parse([]string{"-stream-redis-url", "redis://u:hunter2@h:6379/x"}, env(nil))
	require.ErrorContains(t, err, "-stream-redis-url")
	require.NotContains(t, err.Error(), "hunter2")
}

// Stream tasks go to -stream-redis-url, else to the store's Redis; on
// another store without it they have nowhere to go, and the start-up log
// says which, without a password.
func TestStreamRedis(t *testing.T) {
	for _, tc := range []struct {
		args []string
		attr string
	}{
		{nil, "none (stream tasks refused)"},
		{[]string{"-store", "postgres://u@h/db"}, "none (stream tasks refused)"},
		{[]string{"-store", "redis://h:1/0"}, "the store's"},
		{[]string{"-redis-url", "redis://h:1/0", "-redis-cluster"}, "the store's"},
		{[]string{"-stream-redis-url", "redis://u:s3cretpw@h:1/0"}, "redis://u:xxxxx@h:1/0"},
		{[]string{"-store", "postgres://u@h/db", "-stream-redis-url", "rediss://h:1/0"}, "rediss://h:1/0"},
		{[]string{"-store", "redis://h:1/0", "-stream-redis-url", "redis://other:1/0"}, "redis://other:1/0"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			c, err := Parse(tc.args, env(nil))
			require.NoError(t, err)
			got := map[string]string{}
			for _, a := range c.Attrs() {
				got[a.Key] = a.Value.String()
			}
			require.Equal(t, tc.attr, got["stream-redis-url"])
			require.NotContains(t, fmt.Sprint(got), "s3cretpw")
		})
	}
}
