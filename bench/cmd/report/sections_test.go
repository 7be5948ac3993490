package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchmarksDocHasEachSectionOnce: docs/BENCHMARKS.md, as committed,
// has every heading of its own sections (##) once. The report writes the
// whole file, sections 10 to 13 (docs/bench/redis.md, timerd.md, sql.md
// and scale.md) included; run.sh once appended them again after it.
func TestBenchmarksDocHasEachSectionOnce(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	inCode := false
	for i, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode // a shell comment in a code block is no heading
		}
		if inCode || !strings.HasPrefix(line, "## ") {
			continue
		}
		if first, ok := seen[line]; ok {
			t.Errorf("line %d repeats the heading of line %d: %q", i+1, first, line)
			continue
		}
		seen[line] = i + 1
	}
	for _, want := range []string{
		"## 10. Distributed mode: rediswheel and asynq on one Redis",
		"## 11. timerd: the delayed-task service under load",
		"## 12. Durable tasks on SQL: pgwheel and sqlitewheel against River",
		"## 13. Durable tasks at scale: 10M pending on PostgreSQL, SQLite and a Redis Cluster",
	} {
		if _, ok := seen[want]; !ok {
			t.Errorf("no section %q", want)
		}
	}
}
