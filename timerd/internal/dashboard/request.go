package dashboard

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/go-timingwheel/timingwheel/durable"
)

// maxPreview bounds the body a task's page shows: enough to recognise a
// JSON document, small enough that a 1 MiB body does not make the page one.
const maxPreview = 1024

// request is what a task's page shows of the HTTP request it will send (or
// sent): method, URL, the header names and a preview of the body. Header
// values are never shown: an Authorization or an API key is the receiver's
// credential, and the dashboard's session is not the place to hand it out.
type request struct {
	HTTP        bool   // the payload is an HTTP callback; if not, Why says what there is
	Why         string // why nothing is shown
	Method, URL string
	HeaderNames []string // sorted, canonical
	BodySize    int
	Preview     string        // the first maxPreview bytes; Go-quoted if not UTF-8
	Shown       int           // bytes of the body in Preview
	Truncated   bool          // the body is longer than Preview
	Binary      bool          // Preview is strconv.Quote of bytes that are not UTF-8
	Timeout     time.Duration // the callback's own; 0: the handler's default
}

// requestOf reads key's payload (Config.Payload) and decodes it as an HTTP
// task. A finished task's payload is freed by the store, so only pending
// and dead tasks show one; the store's error is returned for the caller to
// report.
func (d *dashboard) requestOf(ctx context.Context, key string, state durable.State) (request, error) {
	if d.Payload == nil {
		return request{Why: "This store cannot read a task's payload."}, nil
	}
	if state == durable.StateDone || state == durable.StateCancelled {
		return request{Why: "Not kept: a finished task's payload is freed."}, nil
	}
	p, err := d.Payload(ctx, key)
	if err != nil {
		return request{}, err
	}
	t, err := durable.DecodeHTTPTask(p)
	if err != nil {
		return request{Why: "The payload (" + strconv.Itoa(len(p)) + " bytes) is not an HTTP callback."}, nil
	}
	rq := request{HTTP: true, Method: t.Method, URL: t.URL, BodySize: len(t.Body), Timeout: t.Timeout}
	for name := range t.Header {
		rq.HeaderNames = append(rq.HeaderNames, http.CanonicalHeaderKey(name))
	}
	slices.Sort(rq.HeaderNames)
	body := t.Body
	if len(body) > maxPreview {
		body, rq.Truncated = body[:maxPreview], true
		// Do not cut a character in two: back up to its first byte.
		for n := 0; n < utf8.UTFMax && len(body) > 0 && !utf8.RuneStart(t.Body[len(body)]); n++ {
			body = body[:len(body)-1]
		}
	}
	rq.Shown = len(body)
	if utf8.Valid(body) {
		rq.Preview = string(body)
	} else {
		rq.Preview, rq.Binary = strconv.Quote(string(body)), true
	}
	return rq, nil
}
