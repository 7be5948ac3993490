package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
)

// An audit line names the credential of the request, its role and the
// action; without a credential it says "-".
func TestAudit(t *testing.T) {
	var b bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&b, nil))
	ctx := WithCredential(context.Background(), Credential{Name: "ops-1", Role: RoleOperator})
	Audit(ctx, log, "cancelTask", "key", "k1")
	Audit(context.Background(), log, "pause")
	var lines []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, m)
	}
	want := []map[string]string{
		{"msg": "audit", "token": "ops-1", "role": "operator", "action": "cancelTask", "key": "k1"},
		{"msg": "audit", "token": "-", "role": "-", "action": "pause"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d: %s", len(lines), len(want), b.String())
	}
	for i, w := range want {
		for k, v := range w {
			if lines[i][k] != v {
				t.Errorf("line %d: %s = %v, want %q", i, k, lines[i][k], v)
			}
		}
	}
}
