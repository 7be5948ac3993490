package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/go-timingwheel/timingwheel/timerd/internal/apierror"
)

// A shape is the fields a JSON object may have, each with the shape of its
// value (nil for a value that is not an object of known fields). The one
// field "*" means any field names (a map).
type shape map[string]shape

var anyFields = shape{"*": nil}

// decodeBody reads r's body into dst strictly: Content-Type application/json
// (415 otherwise), at most maxBody bytes (413), exactly one JSON object,
// every string in it UTF-8 (checkUTF8: decoding would rewrite the others), no
// member given twice in an object (duplicateMember), no field outside s (matched exactly: encoding/json alone would take "KEY" for
// "key"), and values of dst's types; each 400 names the offending field.
func decodeBody(w http.ResponseWriter, r *http.Request, maxBody int64, s shape, dst any) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return &apiError{apierror.UnsupportedMedia, "", "the body must be application/json"}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return &apiError{apierror.TooLarge, "", "the body is over " + strconv.FormatInt(maxBody, 10) + " bytes"}
	}
	if err != nil {
		return invalid("", "reading the body: %v", err)
	}
	if err := checkUTF8(body); err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(body))
	var v any
	if err := d.Decode(&v); err != nil {
		return invalid("", "the body is not JSON: %v", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return invalid("", "the body holds more than one JSON value")
	}
	if _, ok := v.(map[string]any); !ok {
		return invalid("", "the body must be a JSON object")
	}
	if f := duplicateMember(body); f != "" {
		return invalid(f, "%s is given twice", f)
	}
	if f := unknownField(v, s, ""); f != "" {
		return invalid(f, "unknown field %q", f)
	}
	if err := json.Unmarshal(body, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return invalid(te.Field, "%s must be a JSON %s", te.Field, jsonKind(te.Type.Kind().String()))
		}
		return invalid("", "the body does not decode: %v", err)
	}
	return nil
}

// jsonKind names a Go kind as JSON would.
func jsonKind(k string) string {
	switch k {
	case "string":
		return "string"
	case "int", "int64", "float64":
		return "number (an integer)"
	case "map", "struct", "ptr":
		return "object"
	case "slice":
		return "array"
	case "bool":
		return "boolean"
	}
	return k
}

// unknownField returns the path of the first field of v (in name order) that
// s does not have, or "".
func unknownField(v any, s shape, prefix string) string {
	obj, ok := v.(map[string]any)
	if !ok || s == nil {
		return ""
	}
	if _, ok := s["*"]; ok {
		return ""
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		sub, known := s[k]
		if !known {
			return prefix + k
		}
		if f := unknownField(obj[k], sub, prefix+k+"."); f != "" {
			return f
		}
	}
	return ""
}

// noBody accepts a request without a body, or with the empty object {} as
// application/json (what some clients send with every POST).
func noBody(w http.ResponseWriter, r *http.Request, maxBody int64) error {
	var b [1]byte
	if n, _ := r.Body.Read(b[:]); n == 0 {
		return nil
	}
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b[:]), r.Body))
	var v struct{}
	return decodeBody(w, r, maxBody, shape{}, &v)
}

// query returns r's query parameters, refusing one not in allowed and one
// given twice (400 naming it).
func query(r *http.Request, allowed ...string) (map[string]string, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, invalid("", "bad query string: %v", err)
	}
	out := make(map[string]string, len(q))
	for name, vs := range q {
		if !slices.Contains(allowed, name) {
			return nil, invalid(name, "unknown query parameter %q", name)
		}
		if len(vs) > 1 {
			return nil, invalid(name, "%s given %d times", name, len(vs))
		}
		out[name] = vs[0]
	}
	return out, nil
}

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // a write error is the client gone: nothing to answer
	return nil
}
