package durable

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The checks of task keys, payloads and periodic names, made by the Queue
// before any store call, so that bad input gets the same error on every
// store and a batch with one bad item stores none (task options are
// policy.go's). A store may assume what they let through.

// checkKey accepts 1..MaxKeyLen bytes of UTF-8 without NUL: what PostgreSQL's
// text holds, the narrowest of the stores. Redis and SQLite would hold any
// bytes, but a key one store refuses must be refused by all, so that
// tasks move between stores and bad input gets the same error everywhere.
func checkKey(key string) error {
	if err := checkText(key, MaxKeyLen); err != nil {
		return fmt.Errorf("%w: %w", ErrKey, err)
	}
	return nil
}

// checkPeriodicName applies checkKey's rule to a schedule's name, which
// its occurrences' keys carry.
func checkPeriodicName(name string) error {
	if err := checkText(name, MaxPeriodicNameLen); err != nil {
		return fmt.Errorf("%w: %w", ErrPeriodicName, err)
	}
	return nil
}

func checkText(s string, max int) error {
	switch {
	case s == "" || len(s) > max:
		return fmt.Errorf("length %d (want 1..%d)", len(s), max)
	case !utf8.ValidString(s):
		return fmt.Errorf("%q is not UTF-8", s)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("%q holds a NUL byte", s)
	}
	return nil
}

func checkPayload(p []byte) error {
	if len(p) > MaxPayloadLen {
		return fmt.Errorf("%w: %d bytes (at most %d)", ErrPayload, len(p), MaxPayloadLen)
	}
	return nil
}

// storableText makes a handler's error text what every store keeps alike (a
// PostgreSQL text column is the narrowest): invalid UTF-8 becomes U+FFFD,
// NUL bytes go, and it is cut to at most max bytes on a rune's boundary.
// Such text only informs, so it is cleaned rather than refused.
func storableText(s string, max int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
