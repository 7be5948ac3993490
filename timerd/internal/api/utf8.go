package api

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// checkUTF8 refuses a body with a string that is not UTF-8: bytes that are
// not (RFC 8259 says JSON text is UTF-8), or a \u escape of a lone
// surrogate, which stands for no character. encoding/json would turn either
// into U+FFFD without a word, so that two keys a client sees as different
// ("u8\xff", "u8\xfe") would be one task. The 400 names the field whose value
// is at fault, or the object whose field name is. A body that is not JSON
// passes: decodeBody refuses it next.
func checkUTF8(body []byte) error {
	if utf8.Valid(body) && !bytes.Contains(body, []byte(`\u`)) {
		return nil // the common case: nothing to rewrite
	}
	field, name, bad := notUTF8(body)
	switch {
	case !bad:
		return nil
	case name:
		return invalid(field, "a field name%s is not valid UTF-8", in(field))
	default:
		return invalid(field, "%s must be valid UTF-8 (a \\u escape of a lone surrogate is not a character)", orBody(field))
	}
}

func in(field string) string {
	if field == "" {
		return ""
	}
	return " in " + field
}

func orBody(field string) string {
	if field == "" {
		return "the body"
	}
	return field
}

// frame is one object or array being read by notUTF8.
type frame struct {
	object   bool
	name     string // the field being read (objects)
	wantName bool   // the next string is a field name (objects)
}

// notUTF8 finds the first string of the JSON text body that is not UTF-8,
// and returns the path of the field it is the value of (names joined by
// ".", arrays adding nothing, as the other 400s name callback.headers.X-A),
// or, when it is a field name, the path of its object and name true. It
// walks body's tokens: the raw bytes from the end of one token to the end of
// the next hold only that token's text, besides delimiters and spaces.
func notUTF8(body []byte) (field string, name, bad bool) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var stack []frame
	path := func(upTo int) string {
		var names []string
		for _, f := range stack[:upTo] {
			if f.object {
				names = append(names, f.name)
			}
		}
		return strings.Join(names, ".")
	}
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantName = true
		}
	}
	var end int64
	for {
		tok, err := d.Token()
		if err != nil {
			return "", false, false // the end, or not JSON
		}
		raw := body[end:d.InputOffset()]
		end = d.InputOffset()
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				stack = append(stack, frame{object: true, wantName: true})
			case '[':
				stack = append(stack, frame{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			top := len(stack) - 1
			isName := top >= 0 && stack[top].object && stack[top].wantName
			if !validText(raw) {
				if isName {
					return path(top), true, true
				}
				return path(len(stack)), false, true
			}
			if isName {
				stack[top].name, stack[top].wantName = tok, false
			} else {
				valueDone()
			}
		default:
			valueDone()
		}
	}
}

// validText reports whether raw, JSON text holding at most one string, is
// UTF-8 and escapes no lone surrogate (a high one not followed at once by an
// escaped low one, or a low one alone), as encoding/json decodes escapes.
func validText(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if i+1 < len(raw) && raw[i+1] != 'u' {
			i++ // a one-letter escape, perhaps \\ itself
			continue
		}
		r := escaped(raw, i)
		if !utf16.IsSurrogate(r) {
			i += 5
			continue
		}
		if utf16.DecodeRune(r, escaped(raw, i+6)) == utf8.RuneError {
			return false
		}
		i += 11
	}
	return true
}

// escaped is the code unit of the \uXXXX escape at raw[i:], or -1.
func escaped(raw []byte, i int) rune {
	if i+6 > len(raw) || raw[i] != '\\' || raw[i+1] != 'u' {
		return -1
	}
	v, err := strconv.ParseUint(string(raw[i+2:i+6]), 16, 16)
	if err != nil {
		return -1
	}
	return rune(v)
}
