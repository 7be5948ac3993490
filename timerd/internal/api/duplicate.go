package api

import (
	"bytes"
	"encoding/json"
)

// duplicateMember returns the path of the first member that an object of
// body (valid JSON) gives twice, or "". encoding/json keeps the last of two,
// so {"key":"a","key":"b"} would create b where a reader of the body (a
// proxy, a log, an audit) saw a: decodeBody refuses it instead (400).
// Names are compared exactly, as unknownField compares them; one that
// differs in case only is refused there.
func duplicateMember(body []byte) string {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	f, _ := duplicateIn(d, "")
	return f
}

// duplicateIn reads the value at d's next token, prefix being its path
// ("" or "a.b."), and returns the path of a member given twice in it.
func duplicateIn(d *json.Decoder, prefix string) (string, error) {
	tok, err := d.Token()
	if err != nil {
		return "", err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for d.More() {
			nameTok, err := d.Token()
			if err != nil {
				return "", err
			}
			name, _ := nameTok.(string)
			if seen[name] {
				return prefix + name, nil
			}
			seen[name] = true
			if f, err := duplicateIn(d, prefix+name+"."); f != "" || err != nil {
				return f, err
			}
		}
		_, err = d.Token() // '}'
		return "", err
	case json.Delim('['):
		for d.More() {
			if f, err := duplicateIn(d, prefix); f != "" || err != nil {
				return f, err
			}
		}
		_, err = d.Token() // ']'
		return "", err
	}
	return "", nil
}
