package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
)

// A task's page shows the request it will send: method, URL, header names
// but never their values, and the body's start, escaped, bounded by
// maxPreview without cutting a character.
func TestTaskRequest(t *testing.T) {
	ctx := context.Background()
	q := newQueue(t, standalone(t))
	add := func(key string, body []byte) {
		t.Helper()
		_, err := q.AddHTTP(ctx, key, rediswheel.HTTPTask{URL: "https://example.com/hook?a=1&b=2", Method: "PUT",
			Header: http.Header{"Authorization": {"Bearer SECRET-VALUE"}, "X-Custom": {"other-secret"}}, Body: body,
			Timeout: 5 * time.Second}, time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
	}
	add("http/hostile", []byte(`{"html":"<script>alert(3)</script>"}`))
	long := strings.Repeat("a", maxPreview-1) + "é" + strings.Repeat("b", 2000) // é straddles the bound
	add("http/long", []byte(long))
	add("http/binary", []byte{0xff, 0xfe, '<', 'b', '>'})
	fixture(t, q, nil, []string{"done/1"}, 1, 0)
	h := newDashboard(t, q)
	page := func(key string) string { return get(t, h, "/ui/task?"+url.Values{"key": {key}}.Encode(), true).body }

	r := page("http/hostile")
	mustContain(t, "request", r, `<dd id="req-method"><code>PUT</code></dd>`,
		`<dd id="req-url"><code>https://example.com/hook?a=1&amp;b=2</code></dd>`,
		`<code>Authorization</code>, <code>X-Custom</code>`, `<span id="req-bodysize">36 bytes</span>`,
		`<pre id="req-body">{&#34;html&#34;:&#34;&lt;script&gt;alert(3)&lt;/script&gt;&#34;}</pre>`, "<dt>timeout</dt><dd>5s</dd>")
	mustNotContain(t, "request", r, "SECRET-VALUE", "other-secret", "<script>alert(3)")

	r = page("http/long")
	mustContain(t, "long body", r, `<span id="req-bodysize">3025 bytes</span>, the first 1023 shown<pre id="req-body">`+strings.Repeat("a", maxPreview-1)+`</pre>`)
	r = page("http/binary")
	mustContain(t, "binary body", r, `not UTF-8 text: shown with Go's escapes<pre id="req-body">&#34;\xff\xfe&lt;b&gt;&#34;</pre>`)
	mustContain(t, "a task without an HTTP payload", page("due/000"), `<p class="muted" id="norequest">The payload (0 bytes) is not an HTTP callback.</p>`)
	mustContain(t, "a finished task", page("done/1"), `<p class="muted" id="norequest">Not kept: a finished task&#39;s payload is freed.</p>`)
}
