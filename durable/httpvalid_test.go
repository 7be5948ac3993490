package durable

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// netHTTP answers "does net/http send this task, with its key intact?" by
// sending it with real net/http clients, over HTTP/1.1 and over HTTP/2, to
// local servers whatever the URL's host: an HTTPHandler may meet either
// protocol, so a task is sendable only if both send it.
type netHTTP struct {
	clients []*http.Client // HTTP/1.1, HTTP/2
	schemes []string       // the scheme each client is given the URL with
}

// errBadDialAddr stands for the dial net/http asked for failing for good.
var errBadDialAddr = errors.New("the dialer refuses this address")

func newNetHTTP(t testing.TB) *netHTTP {
	// The server echoes the Idempotency-Key it received, so that a key net/http alters on the
	// way is seen.
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Seen-Key"] = r.Header.Values(HeaderIdempotencyKey)
	})
	h1 := httptest.NewServer(echo)
	t.Cleanup(h1.Close)
	h2 := httptest.NewUnstartedServer(echo)
	h2.EnableHTTP2 = true
	h2.StartTLS()
	t.Cleanup(h2.Close)

	client := func(srv *httptest.Server, tr *http.Transport) *http.Client {
		tr.Proxy = nil
		// Every host leads to srv, but only after the address net/http asks for has passed the
		// dialer's own checks: the port must parse (net.Dialer resolves it with LookupPort,
		// which for digits does no lookup).
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			_, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, errBadDialAddr
			}
			if _, err := net.DefaultResolver.LookupPort(ctx, network, port); err != nil {
				return nil, errBadDialAddr
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", srv.Listener.Addr().String())
		}
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr, Timeout: 10 * time.Second}
	}
	tr2 := h2.Client().Transport.(*http.Transport).Clone()
	tr2.TLSClientConfig.InsecureSkipVerify = true // the URL's host is not the certificate's
	tr2.ForceAttemptHTTP2 = true
	return &netHTTP{
		clients: []*http.Client{client(h1, &http.Transport{}), client(h2, tr2)},
		schemes: []string{"http", "https"},
	}
}

// sends reports whether both clients send ht, as HTTPHandler builds the request, and the
// servers receive key as its Idempotency-Key; why says what failed.
func (n *netHTTP) sends(t testing.TB, key string, ht HTTPTask) (ok bool, why string) {
	for i, c := range n.clients {
		req, err := http.NewRequest(ht.Method, ht.URL, bytes.NewReader(ht.Body))
		if err != nil {
			return false, "NewRequest: " + err.Error()
		}
		if s := req.URL.Scheme; s != "http" && s != "https" {
			// The transport's refusal; checked here only because the URL is rewritten below.
			return false, "scheme " + s
		}
		req.URL.Scheme = n.schemes[i]
		for name, values := range ht.Header {
			for _, v := range values {
				req.Header.Add(name, v)
			}
		}
		req.Header.Set(HeaderIdempotencyKey, key)
		req.Header.Set(HeaderAttempt, "1")
		resp, err := c.Do(req)
		if err != nil {
			return false, n.schemes[i] + ": " + err.Error()
		}
		resp.Body.Close()
		if seen := resp.Header.Values("Seen-Key"); len(seen) != 1 || seen[0] != key {
			return false, n.schemes[i] + ": key arrived as " + strconv.Quote(strings.Join(seen, ",")) + ", status " + resp.Status
		}
	}
	return true, ""
}

// stricterOnPurpose reports whether AddHTTP may refuse ht although net/http sends it, for one
// of the documented reasons (httpvalid.go, HTTPTask): an empty method (net/http reads it as
// GET; HTTPTask never defaults), a header net/http drops or the handler replaces, an Upgrade
// header, a non-ASCII host, port 0, or a colon in an unbracketed host.
func stricterOnPurpose(ht HTTPTask) bool {
	if ht.Method == "" {
		return true
	}
	for name := range ht.Header {
		switch http.CanonicalHeaderKey(name) {
		case "Host", "Content-Length", "Transfer-Encoding", "Upgrade", HeaderIdempotencyKey, HeaderAttempt, HeaderAttemptRediswheel:
			return true
		}
	}
	u, err := url.Parse(ht.URL)
	if err != nil {
		return false
	}
	for i := 0; i < len(u.Host); i++ {
		if u.Host[i] >= 0x80 {
			return true
		}
	}
	if n, err := strconv.ParseUint(u.Port(), 10, 64); err == nil && n == 0 {
		return true
	}
	return u.Host != "" && u.Host[0] != '[' && strings.Contains(u.Hostname(), ":")
}

// checkAgainstNetHTTP fails t unless AddHTTP's verdict on (key, ht) is net/http's, or AddHTTP
// refuses it for a documented reason. It never lets AddHTTP accept what net/http refuses.
func checkAgainstNetHTTP(t *testing.T, n *netHTTP, key string, ht HTTPTask) {
	t.Helper()
	_, ourErr := encodeHTTPTask(key, ht)
	if ourErr != nil && stricterOnPurpose(ht) {
		// Nothing to compare. And net/http's answer can take long: over HTTP/2 a colon in the
		// host makes it wait for its timeout.
		return
	}
	sent, why := n.sends(t, key, ht)
	switch {
	case ourErr == nil && !sent:
		t.Errorf("AddHTTP accepts key %q task %+v, which net/http does not send: %s", key, ht, why)
	case ourErr != nil && sent:
		t.Errorf("AddHTTP refuses key %q task %+v, which net/http sends: %v", key, ht, ourErr)
	}
}

// validationCases is a table of tasks AddHTTP refuses and accepts, each with the key it is
// added under; it seeds FuzzHTTPValidation.
var validationCases = []struct {
	key string
	ht  HTTPTask
}{
	{"k", HTTPTask{URL: "http://127.0.0.1/hook", Method: "POST"}},
	{"k", HTTPTask{URL: "https://example.com:8443/a?b=c", Method: "PURGE"}},
	{"k", HTTPTask{URL: "http://[::1]:65535/", Method: "GET"}},
	{"k", HTTPTask{URL: "http://h:0080/", Method: "GET"}},
	{"k", HTTPTask{URL: "http://127.0.0.1:99999/", Method: "GET"}},
	{"k", HTTPTask{URL: "http://127.0.0.1:65536/", Method: "GET"}},
	{"k", HTTPTask{URL: "http://127.0.0.1:0/", Method: "GET"}},
	{"k", HTTPTask{URL: "http://a<b/", Method: "GET"}},
	{"k", HTTPTask{URL: "http://a%25b/", Method: "GET"}},
	{"k", HTTPTask{URL: "http://h:80:80/", Method: "GET"}},
	{"k", HTTPTask{URL: "http://]", Method: "GET"}},
	{"k", HTTPTask{URL: "hTtp://:", Method: "GET"}},
	{"k", HTTPTask{URL: "http://:8080/", Method: "GET"}},
	{"k", HTTPTask{URL: "http://a[b:1/", Method: "GET"}},
	{"k", HTTPTask{URL: "http://exämple.com/", Method: "GET"}},
	{"k", HTTPTask{URL: "ftp://h/", Method: "GET"}},
	{"k", HTTPTask{URL: "http://h/", Method: "GE T"}},
	{"k", HTTPTask{URL: "http://h/", Method: "GET", Header: http.Header{"X-A": {"a\x01b"}}}},
	{"k", HTTPTask{URL: "http://h/", Method: "GET", Header: http.Header{"X-A": {"a\x7f"}}}},
	{"k", HTTPTask{URL: "http://h/", Method: "GET", Header: http.Header{"X-A": {"a\r\nX-B: b"}}}},
	{"k", HTTPTask{URL: "http://h/", Method: "GET", Header: http.Header{"X-A": {"a\x00"}}}},
	{"k", HTTPTask{URL: "http://h/", Method: "GET", Header: http.Header{"X-A": {"tab\tand \xff obs-text"}}}},
	{"k", HTTPTask{URL: "http://h/", Method: "GET", Header: http.Header{"Bad Name": {"x"}}}},
	{"k", HTTPTask{URL: "http://h/", Method: "GET", Header: http.Header{"Connection": {"close"}}}},
	{"k", HTTPTask{URL: "http://h/", Method: "GET", Header: http.Header{"Connection": {"X-A"}}}},
	{"k", HTTPTask{URL: "http://h/", Method: "GET", Header: http.Header{"Upgrade": {"websocket"}}}},
	{"k", HTTPTask{URL: "http://h/", Method: "GET", Header: http.Header{"Host": {"other"}}}},
	{"order\n1", HTTPTask{URL: "http://h/", Method: "GET"}},
	{"a\x7f", HTTPTask{URL: "http://h/", Method: "GET"}},
	{"a\x01", HTTPTask{URL: "http://h/", Method: "GET"}},
	{" padded ", HTTPTask{URL: "http://h/", Method: "GET"}},
	{"tab\tinside", HTTPTask{URL: "http://h/", Method: "GET"}},
	{"заказ 1", HTTPTask{URL: "http://h/", Method: "GET"}},
}

// TestHTTPValidationMatchesNetHTTP holds AddHTTP's checks against net/http itself, on the
// table, and proves that each input issue 9 names is refused by net/http too.
func TestHTTPValidationMatchesNetHTTP(t *testing.T) {
	n := newNetHTTP(t)
	for _, tc := range validationCases {
		checkAgainstNetHTTP(t, n, tc.key, tc.ht)
	}
	for _, tc := range []struct {
		key string
		ht  HTTPTask
	}{
		{"k", HTTPTask{URL: "http://h/", Method: "GET", Header: http.Header{"X-A": {"a\x01b"}}}},
		{"k", HTTPTask{URL: "http://h/", Method: "GET", Header: http.Header{"X-A": {"a\x7f"}}}},
		{"order\n1", HTTPTask{URL: "http://h/", Method: "GET"}},
		{"k", HTTPTask{URL: "http://127.0.0.1:99999/", Method: "GET"}},
		{"k", HTTPTask{URL: "http://h/", Method: "GET", Header: http.Header{"Connection": {"X-A"}}}},
	} {
		sent, _ := n.sends(t, tc.key, tc.ht)
		assert.False(t, sent, "net/http sends key %q task %+v", tc.key, tc.ht)
		_, err := encodeHTTPTask(tc.key, tc.ht)
		assert.Error(t, err)
	}
	sent, why := n.sends(t, "k", HTTPTask{URL: "http://h/", Method: "GET"})
	require.True(t, sent, "the oracle sends a plain task: %s", why)
}

// FuzzHTTPValidation: AddHTTP never accepts a task net/http would not send, and refuses one it
// would send only for a documented reason. Run with
//
//	go test -run '^$' -fuzz FuzzHTTPValidation -fuzztime 60s .
func FuzzHTTPValidation(f *testing.F) {
	for _, tc := range validationCases {
		name, value := "X-A", "v"
		for k, vv := range tc.ht.Header {
			name, value = k, vv[0]
		}
		f.Add(tc.key, tc.ht.URL, tc.ht.Method, name, value)
	}
	n := newNetHTTP(f)
	f.Fuzz(func(t *testing.T, key, rawURL, method, name, value string) {
		if len(key)+len(rawURL)+len(method)+len(name)+len(value) > 4<<10 {
			t.Skip("net/http's header size limits are not what this checks")
		}
		checkAgainstNetHTTP(t, n, key, HTTPTask{URL: rawURL, Method: method, Header: http.Header{name: {value}}})
	})
}
