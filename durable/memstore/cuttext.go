package memstore

import "unicode/utf8"

// cutText returns s cut to at most n bytes on a character's boundary: the
// Queue sends valid UTF-8, and every store keeps the same prefix of it.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
