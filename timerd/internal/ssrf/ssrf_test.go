package ssrf_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/timerd/internal/ssrf"
)

func check(t *testing.T, g *ssrf.Guard, raw string) error {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return g.CheckURL(context.Background(), u)
}

// Every denied range refuses its addresses, in IPv4, IPv6 and the IPv6
// forms that carry an IPv4 address; public addresses pass.
func TestIPLiterals(t *testing.T) {
	g, err := ssrf.New(nil)
	require.NoError(t, err)
	denied := []string{
		"127.0.0.1", "127.255.255.254", "0.0.0.0", "0.1.2.3",
		"10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"169.254.169.254", "169.254.0.1", "100.64.0.1", "100.127.255.255",
		"192.0.0.8", "198.18.0.1", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
		"[::1]", "[::]", "[::127.0.0.1]", "[::10.0.0.1]",
		"[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::ffff:169.254.169.254]", "[::ffff:10.1.2.3]",
		"[64:ff9b::127.0.0.1]", "[64:ff9b::a9fe:a9fe]", "[64:ff9b:1::1]",
		"[2002:7f00:1::1]", "[2002:c0a8:101::]",
		"[fc00::1]", "[fd12:3456::1]", "[fe80::1]", "[fe80::1%25eth0]", "[fec0::1]", "[ff02::1]", "[100::1]",
	}
	for _, h := range denied {
		err := check(t, g, "http://"+h+"/hook")
		require.ErrorIs(t, err, ssrf.ErrForbidden, h)
	}
	allowed := []string{
		"93.184.215.14", "8.8.8.8", "100.63.255.255", "100.128.0.1", "172.32.0.1", "192.169.0.1",
		"169.253.255.255", "[2606:4700::1111]", "[::ffff:8.8.8.8]", "[64:ff9b::8.8.8.8]", "[2002:808:808::1]",
	}
	for _, h := range allowed {
		require.NoError(t, check(t, g, "https://"+h+":8443/hook"), h)
	}
}

func TestErrorNamesRange(t *testing.T) {
	g, _ := ssrf.New(nil)
	err := check(t, g, "http://169.254.169.254/latest/meta-data")
	require.ErrorContains(t, err, "169.254.169.254 is link-local")
	err = check(t, g, "http://[::ffff:127.0.0.1]/")
	require.ErrorContains(t, err, "IPv4-mapped form of 127.0.0.1, loopback")
}

func TestAllowlist(t *testing.T) {
	g, err := ssrf.New([]string{"10.1.0.0/16", "127.0.0.1/32", "fd00::/8", "hooks.internal:8443", "192.168.1.5:80"})
	require.NoError(t, err)
	g.SetResolver(fakeResolver{"hooks.internal": {"10.9.9.9"}})
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"http://10.1.2.3/", true},
		{"http://10.2.0.1/", false},
		{"http://127.0.0.1:9999/", true},
		{"http://[::ffff:127.0.0.1]/", true}, // the same address
		{"http://127.0.0.2/", false},
		{"http://[fd00::5]/", true},
		{"http://[fc00::5]/", false},
		{"https://hooks.internal:8443/x", true},
		{"https://HOOKS.internal.:8443/x", true},
		{"https://hooks.internal/x", false}, // port 443, not 8443
		{"http://192.168.1.5/", true},       // port 80 by scheme
		{"http://192.168.1.5:81/", false},
	} {
		err := check(t, g, tc.url)
		if tc.ok {
			require.NoError(t, err, tc.url)
		} else {
			require.ErrorIs(t, err, ssrf.ErrForbidden, tc.url)
		}
	}
}

func TestBadAllowEntries(t *testing.T) {
	for _, a := range []string{"10.0.0.0/33", "10.0.0.1", "host", "host:0", "host:99999", ":80", "nonsense/8"} {
		_, err := ssrf.New([]string{a})
		require.ErrorIs(t, err, ssrf.ErrAllow, a)
	}
}

// fakeResolver answers from a table.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	addrs, ok := f[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, a := range addrs {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// A name is allowed only if every address it resolves to is.
func TestNames(t *testing.T) {
	g, err := ssrf.New([]string{"internal.test:443"})
	require.NoError(t, err)
	g.SetResolver(ssrf.Resolver(fakeResolver{
		"public.test":   {"93.184.215.14", "2606:4700::1111"},
		"metadata.test": {"169.254.169.254"},
		"mixed.test":    {"93.184.215.14", "10.0.0.1"},
		"mapped.test":   {"::ffff:127.0.0.1"},
		"empty.test":    {},
	}))
	require.NoError(t, check(t, g, "https://public.test/hook"))
	require.ErrorIs(t, check(t, g, "http://metadata.test/"), ssrf.ErrForbidden)
	require.ErrorIs(t, check(t, g, "http://mixed.test/"), ssrf.ErrForbidden)
	require.ErrorIs(t, check(t, g, "http://mapped.test/"), ssrf.ErrForbidden)
	require.ErrorContains(t, check(t, g, "http://metadata.test/"), "metadata.test resolves to it")

	err = check(t, g, "http://nosuch.test/")
	require.Error(t, err)
	require.NotErrorIs(t, err, ssrf.ErrForbidden, "a resolution failure is not a refusal")
	require.ErrorIs(t, err, ssrf.ErrUnresolved)
	require.ErrorIs(t, check(t, g, "http://empty.test/"), ssrf.ErrUnresolved)
	// host:port entries are taken on the name's word: not resolved at all.
	require.NoError(t, check(t, g, "https://internal.test/"))
	require.Error(t, check(t, g, "ftp://public.test/"))
	require.Error(t, check(t, g, "http:///nohost"))
}

// The client checks the address it connects to: a loopback server is
// refused without an allowlist, even by a name (localhost) that CheckURL
// was never asked about, and reached with 127.0.0.1/32 or its host:port.
func TestClientDialCheck(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)

	get := func(g *ssrf.Guard, raw string) error {
		c := g.Client()
		defer c.CloseIdleConnections()
		resp, err := c.Get(raw)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		require.Equal(t, "ok", string(b))
		return nil
	}

	closed, _ := ssrf.New(nil)
	require.ErrorIs(t, get(closed, srv.URL), ssrf.ErrForbidden)
	require.ErrorIs(t, get(closed, "http://localhost:"+u.Port()), ssrf.ErrForbidden)

	byCIDR, _ := ssrf.New([]string{"127.0.0.1/32"})
	require.NoError(t, get(byCIDR, srv.URL))

	byHostPort, _ := ssrf.New([]string{u.Host})
	require.NoError(t, get(byHostPort, srv.URL))
	other, _ := ssrf.New([]string{"127.0.0.1:1"})
	require.ErrorIs(t, get(other, srv.URL), ssrf.ErrForbidden, "another port of the same host")
}

// The client ignores HTTP_PROXY: a proxy would make the connection the
// guard is there to check. A request to a host no proxy-less client can
// reach (.invalid) fails without reaching the proxy.
func TestClientNoProxy(t *testing.T) {
	proxied := make(chan struct{}, 1)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { proxied <- struct{}{} }))
	defer proxy.Close()
	t.Setenv("HTTP_PROXY", proxy.URL)
	g, _ := ssrf.New([]string{"timerd.invalid:80"})
	c := g.Client()
	defer c.CloseIdleConnections()
	require.Nil(t, c.Transport.(*http.Transport).Proxy)
	_, err := c.Get("http://timerd.invalid/")
	require.Error(t, err)
	require.Empty(t, proxied)
}
