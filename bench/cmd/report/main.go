// Command report turns the outputs of bench/run.sh (raw `go test -bench`
// text and the JSON lines of the workload programs, under docs/bench/) into
// docs/BENCHMARKS.md and its PNG plots. It computes medians and ratios
// itself, from one run, so that a report never mixes machines or moments.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

func main() {
	docs := flag.String("docs", "../docs", "docs directory; raw results are read from its bench/ subdirectory")
	flag.Parse()
	if err := run(*docs); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func run(docs string) error {
	raw := filepath.Join(docs, "bench")
	r := &report{docs: docs}
	var err error
	for _, f := range []struct {
		name string
		dst  *benchSet
	}{{"ops.txt", &r.ops}, {"headline.txt", &r.headline}, {"heap.txt", &r.heap}, {"parallel.txt", &r.parallel}} {
		if *f.dst, err = readBench(filepath.Join(raw, f.name)); err != nil {
			return err
		}
	}
	if err = readJSONL(filepath.Join(raw, "accuracy.jsonl"), &r.accuracy); err != nil {
		return err
	}
	if err = readJSONL(filepath.Join(raw, "burst.jsonl"), &r.burst); err != nil {
		return err
	}
	if err = readJSONL(filepath.Join(raw, "purgatory.jsonl"), &r.purgatory); err != nil {
		return err
	}
	if err = readJSONL(filepath.Join(raw, "idle.jsonl"), &r.idle); err != nil {
		return err
	}
	if err = readJSONL(filepath.Join(raw, "httpserver.jsonl"), &r.httpServer); err != nil {
		return err
	}
	if err = readJSONL(filepath.Join(raw, "firecost.jsonl"), &r.fireCost); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if r.scaling, err = readBenchProcs(filepath.Join(raw, "scaling.txt")); err != nil {
		return err
	}
	if r.env, err = readEnv(filepath.Join(raw, "env.txt")); err != nil {
		return err
	}
	if b, err := os.ReadFile(filepath.Join(raw, "benchstat.txt")); err == nil {
		r.benchstat = string(b)
	}
	// Hand-written analysis of the purgatory load, kept across runs (see
	// purgatorySection).
	if b, err := os.ReadFile(filepath.Join(raw, "purgatory.md")); err == nil {
		r.purgatoryNotes = string(b)
	}
	if b, err := os.ReadFile(filepath.Join(raw, "redis.md")); err == nil {
		r.redisNotes = string(b)
	}
	if b, err := os.ReadFile(filepath.Join(raw, "timerd.md")); err == nil {
		r.timerdNotes = string(b)
	}
	if b, err := os.ReadFile(filepath.Join(raw, "sql.md")); err == nil {
		r.sqlNotes = string(b)
	}
	if b, err := os.ReadFile(filepath.Join(raw, "scale.md")); err == nil {
		r.scaleNotes = string(b)
	}
	if r.matrix, err = readMatrix(raw); err != nil {
		return err
	}
	if err := r.plots(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(docs, "BENCHMARKS.md"), []byte(r.markdown()), 0o644)
}

// benchSet holds every value of every metric per benchmark result name,
// one value per -count repetition. Lines starting "# " are notes the
// benchmarks print (a skipped population); they are kept as keys with no values.
type benchSet map[string]map[string][]float64

// notes returns the distinct notes of s, in no particular order.
func (s benchSet) notes() []string {
	var out []string
	for k := range s {
		if n, ok := strings.CutPrefix(k, "# "); ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// key names a result: "AfterFuncStop", "lib=wheel", "N=1M" give
// "AfterFuncStop/lib=wheel/N=1M".
func key(bench, lib, n string) string {
	k := bench + "/lib=" + lib
	if n != "" {
		k += "/N=" + n
	}
	return k
}

// readBench parses `go test -bench` output lines:
//
//	BenchmarkReset/lib=wheel/N=1M-2   1000000   41.0 ns/op   0 B/op   0 allocs/op
func readBench(path string) (benchSet, error) { return readBenchAs(path, false) }

// readBenchProcs is readBench for a run with -cpu: the GOMAXPROCS suffix is
// kept in the name, as "/procs=4".
func readBenchProcs(path string) (benchSet, error) { return readBenchAs(path, true) }

func readBenchAs(path string, keepProcs bool) (benchSet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	set := benchSet{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "# ") {
			set[sc.Text()] = nil
			continue
		}
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		name := strings.TrimPrefix(fields[0], "Benchmark")
		procs := "1" // go test leaves the suffix off for GOMAXPROCS 1
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name, procs = name[:i], name[i+1:]
			}
		}
		if keepProcs {
			name += "/procs=" + procs
		}
		if set[name] == nil {
			set[name] = map[string][]float64{}
		}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q: %v", path, sc.Text(), err)
			}
			set[name][fields[i+1]] = append(set[name][fields[i+1]], v)
		}
	}
	return set, sc.Err()
}

// median of the values of unit for result k, and whether there were any.
func (s benchSet) median(k, unit string) (float64, bool) {
	v := slices.Clone(s[k][unit])
	if len(v) == 0 {
		return 0, false
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2], true
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2, true
}

// spread is the smallest and largest value of unit for k.
func (s benchSet) spread(k, unit string) (lo, hi float64, n int) {
	v := s[k][unit]
	if len(v) == 0 {
		return 0, 0, 0
	}
	return slices.Min(v), slices.Max(v), len(v)
}

func readJSONL[T any](path string, dst *[]T) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		*dst = append(*dst, v)
	}
	return sc.Err()
}

// env holds run.sh's env.txt: "key: value" lines, commands repeated.
type env struct {
	values   map[string]string
	commands []string
	failed   []string
	// reruns are the steps run again after the run, on the same machine,
	// as "rerun: <which, on which commit, why>" lines name them.
	reruns []string
}

func readEnv(path string) (env, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return env{values: map[string]string{}}, err
	}
	return parseEnv(string(b))
}

// parseEnv parses the "key: value" lines of text as readEnv does.
func parseEnv(text string) (env, error) {
	e := env{values: map[string]string{}}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		switch k {
		case "command":
			e.commands = append(e.commands, v)
		case "failed":
			e.failed = append(e.failed, v)
		case "rerun":
			e.reruns = append(e.reruns, v)
		default:
			e.values[k] = v
		}
	}
	return e, nil
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// memTotal is MemTotal of /proc/meminfo, as written there.
func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			if kb, err := strconv.ParseFloat(strings.Fields(v)[0], 64); err == nil {
				return fmt.Sprintf("%.1f GiB", kb/(1<<20))
			}
		}
	}
	return "unknown"
}
