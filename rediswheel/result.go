package rediswheel

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-timingwheel/timingwheel/durable"
)

// A delivery's result travels to lua/settle.lua as one text, which the
// script stores as the 7th element of the history entry (remember, in
// lua/common.lua) without reading it: "<code>|<truncated 0 or 1>|<body in
// base64>", or "" for the zero Result. Base64, because the history is JSON
// made by Lua's cjson, which would pass a body's bytes through unchecked, and
// encoding/json would then replace those that are not UTF-8. If this
// changes, adjust decodeResult and the note in lua/common.lua.

// encodeResult is r as settle.lua takes it; the Queue bounds the body
// (durable.MaxResultBody), cut here again so a Store caller cannot store more.
func encodeResult(r durable.Result) string {
	if r.Code == 0 && len(r.Body) == 0 && !r.Truncated {
		return ""
	}
	if len(r.Body) > durable.MaxResultBody {
		r.Body, r.Truncated = r.Body[:durable.MaxResultBody], true
	}
	t := "0"
	if r.Truncated {
		t = "1"
	}
	return strconv.Itoa(r.Code) + "|" + t + "|" + base64.StdEncoding.EncodeToString(r.Body)
}

// decodeResult is encodeResult backwards; it refuses any other text.
func decodeResult(s string) (durable.Result, error) {
	code, rest, ok1 := strings.Cut(s, "|")
	t, b64, ok2 := strings.Cut(rest, "|")
	n, err := strconv.Atoi(code)
	if !ok1 || !ok2 || err != nil || (t != "0" && t != "1") {
		return durable.Result{}, fmt.Errorf("malformed result %.40q", s)
	}
	body, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(body) > durable.MaxResultBody {
		return durable.Result{}, fmt.Errorf("malformed result body %.40q", b64)
	}
	if len(body) == 0 {
		body = nil
	}
	return durable.Result{Code: n, Body: body, Truncated: t == "1"}, nil
}
