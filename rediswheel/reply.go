package rediswheel

import (
	"fmt"
	"strconv"
)

// Script replies are flat arrays: a fixed header, then one row of stride
// values per task. decodeStride cuts the rows; a row reads its values by
// position through row, which remembers the first value of the wrong type,
// so a decoder reads every field and checks once. Each script's reply shape
// is described in its .lua file and in the Go file that drives it.

// decodeStride splits v into rows of stride values, or fails if v does not
// divide into them. The rows share v's backing array.
func decodeStride(v []any, stride int) ([][]any, error) {
	if stride <= 0 {
		panic("rediswheel: decodeStride with stride <= 0")
	}
	if len(v)%stride != 0 {
		return nil, fmt.Errorf("%d values are not rows of %d", len(v), stride)
	}
	rows := make([][]any, 0, len(v)/stride)
	for i := 0; i < len(v); i += stride {
		rows = append(rows, v[i:i+stride:i+stride])
	}
	return rows, nil
}

// A row reads the values of one reply row (or header) by position.
type row struct {
	v   []any
	err error // the first value that was not what its reader expected
}

func (r *row) bad(i int, want string) {
	if r.err == nil {
		r.err = fmt.Errorf("value %d is %T %v, want %s", i, r.v[i], r.v[i], want)
	}
}

// int reads an integer reply.
func (r *row) int(i int) int64 {
	n, ok := r.v[i].(int64)
	if !ok {
		r.bad(i, "an integer")
	}
	return n
}

// str reads a bulk string reply.
func (r *row) str(i int) string {
	s, ok := r.v[i].(string)
	if !ok {
		r.bad(i, "a string")
	}
	return s
}

// score reads a sorted-set score, which Redis sends as text, as whole ms.
func (r *row) score(i int) int64 {
	s, ok := r.v[i].(string)
	f, err := strconv.ParseFloat(s, 64)
	if !ok || err != nil {
		r.bad(i, "a score")
	}
	return int64(f)
}
