package dashboard

import (
	"fmt"
	"unicode/utf8"

	"github.com/go-timingwheel/timingwheel/durable"
)

// responseText is how a task's page shows a delivery's response body (its
// Result): as text when it is UTF-8, which html/template escapes; else only
// its size, as bytes that are not text mean nothing on a page (GET
// /v1/tasks/{key} gives them in base64). A body the store cut says so.
func responseText(r durable.Result) string {
	var s string
	switch {
	case len(r.Body) == 0:
	case utf8.Valid(r.Body) || r.Truncated && utf8.Valid(trimCutRune(r.Body)):
		s = string(trimCutRune(r.Body))
	default:
		s = fmt.Sprintf("(%d bytes, not text)", len(r.Body))
	}
	if r.Truncated {
		s += " … (cut at 64 KiB)"
	}
	return s
}

// trimCutRune drops an incomplete UTF-8 character at the end of b, where a
// cut may have left one (at most 3 bytes).
func trimCutRune(b []byte) []byte {
	for i := 1; i <= 3 && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}
