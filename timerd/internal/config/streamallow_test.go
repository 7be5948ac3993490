package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// -stream-allow names the streams stream tasks may append to, by name or by
// prefix; an entry reaching the store's own keys ({<namespace>.…}) or every
// key is refused at start, and Streams.CheckName refuses the rest at create
// and at delivery.
func TestStreamAllow(t *testing.T) {
	c, err := Parse([]string{"-stream-allow", "orders, billing:*", "-namespace", "svc"}, env(nil))
	require.NoError(t, err)
	require.Equal(t, []string{"orders", "billing:*"}, c.Streams.Allow)
	c2, err := Parse(nil, env(map[string]string{"TIMERD_STREAM_ALLOW": "orders,billing:*", "TIMERD_NAMESPACE": "svc"}))
	require.NoError(t, err)
	require.Equal(t, c.Streams.Allow, c2.Streams.Allow, "environment")

	for name, ok := range map[string]bool{
		"orders": true, "billing:eu": true, "billing:": true,
		"orders2": false, "billing": false, "{svc.7}:due": false, "other-app:key": false,
	} {
		err := c.Streams.CheckName(name, c.Namespace)
		assert.Equal(t, ok, err == nil, "%s: %v", name, err)
	}
	var none Streams
	assert.ErrorContains(t, none.CheckName("orders", "svc"), "-stream-allow", "no allowlist: no stream")

	for _, allow := range []string{"*", "{*", "{svc*", "{svc.7}:due", "{svc.timerd}:x*", "a,,b", "a*b"} {
		_, err := Parse([]string{"-stream-allow", allow, "-namespace", "svc"}, env(nil))
		assert.ErrorContains(t, err, "-stream-allow (TIMERD_STREAM_ALLOW)", "%q", allow)
	}
	// Another namespace's keys are not this store's: allowed if named.
	_, err = Parse([]string{"-stream-allow", "{other.1}:x", "-namespace", "svc"}, env(nil))
	require.NoError(t, err)
}
