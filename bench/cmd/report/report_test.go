package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadBenchMedians(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.txt")
	raw := `goos: linux
BenchmarkReset/lib=wheel/N=1M-2   1000   40.0 ns/op   0 B/op   0 allocs/op
BenchmarkReset/lib=wheel/N=1M-2   1000   60.0 ns/op   0 B/op   0 allocs/op
BenchmarkReset/lib=wheel/N=1M-2   1000   50.0 ns/op   0 B/op   0 allocs/op
BenchmarkHeap/lib=runtime/N=1M-2  1  5.0 ns/op  112.0 B/timer  -0.5 live-after-stop-B/timer
PASS
`
	if err := os.WriteFile(path, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := readBench(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.median(key("Reset", "wheel", "1M"), "ns/op"); got != 50 {
		t.Errorf("median ns/op = %v, want 50", got)
	}
	if lo, hi, n := s.spread(key("Reset", "wheel", "1M"), "ns/op"); lo != 40 || hi != 60 || n != 3 {
		t.Errorf("spread = %v %v %v", lo, hi, n)
	}
	if got, _ := s.median(key("Heap", "runtime", "1M"), "live-after-stop-B/timer"); got != -0.5 {
		t.Errorf("custom metric = %v, want -0.5", got)
	}
	if _, ok := s.median(key("Reset", "gozero", "1M"), "ns/op"); ok {
		t.Error("a missing result has a median")
	}
}

func TestRatioAndNum(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "0"}, {1234.4, "1234"}, {12.34, "12.3"}, {1.234, "1.23"}, {0.01234, "0.0123"}} {
		if got := num(c.v); got != c.want {
			t.Errorf("num(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	if got := ratio(1, 4); got != "0.25×" {
		t.Errorf("ratio = %q", got)
	}
	if got := ratio(1, 0); got != "—" {
		t.Errorf("ratio by zero = %q", got)
	}
}
