package rediswheel

import "fmt"

// decodeStride is R1's shared decoder (reply.go), stubbed here with the
// agreed signature until it lands: v split into rows of stride values.
func decodeStride(v []any, stride int) ([][]any, error) {
	if stride <= 0 || len(v)%stride != 0 {
		return nil, fmt.Errorf("unexpected reply %v", v)
	}
	rows := make([][]any, 0, len(v)/stride)
	for i := 0; i < len(v); i += stride {
		rows = append(rows, v[i:i+stride])
	}
	return rows, nil
}
