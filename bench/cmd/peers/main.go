// Command peers compares this module's AfterFunc+Stop with the two Go
// timing wheels closest to it, github.com/antlabs/timer and
// github.com/RussellLuo/timingwheel, with a million timers pending.
//
// Neither is on the module proxy, so the bench module cannot require them:
// peers takes the paths of their source checkouts (ANTLABS_DIR and
// RUSSELLLUO_DIR; e.g. `git clone https://github.com/antlabs/timer`) and
// this module's root (-wheel), writes a throwaway module in a temporary
// directory whose go.mod replaces the three with those paths, copies the
// benchmark (peers_test.go.txt) into it, lets `go mod tidy` fetch the
// peers' own dependencies from the proxy, and builds the test binary. It
// then runs the binary -count times, one process at a time, each running
// every library in turn (in an order that turns by one library each time),
// so that a change in the machine's load falls on all of them alike, and
// prints the `go test -bench` lines for benchstat:
//
//	ANTLABS_DIR=~/src/timer RUSSELLLUO_DIR=~/src/timingwheel \
//	    go run ./cmd/peers -count 6 > peers.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /lib peers.txt
//
// It ends with the medians' ratios, this module's ns/op over each peer's,
// as "# " lines (which benchstat ignores). Nothing of the peers is kept.
package main

import (
	"bufio"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

//go:embed peers_test.go.txt
var benchSource []byte

// peer is a module replaced by a local checkout.
type peer struct {
	module, env, dir string
}

func main() {
	wheel := flag.String("wheel", "..", "this module's root (the timingwheel checkout)")
	count := flag.Int("count", 6, "processes, each running every library once")
	benchtime := flag.String("benchtime", "1s", "-test.benchtime of each benchmark")
	bench := flag.String("bench", ".", "-test.bench pattern below BenchmarkAfterFuncStop, e.g. size=64")
	keep := flag.Bool("keep", false, "keep the throwaway module and print its path (to profile or rerun it)")
	flag.Parse()
	if err := run(*wheel, *count, *benchtime, *bench, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
}

func run(wheelDir string, count int, benchtime, pattern string, keep bool) error {
	peers := []peer{
		{"github.com/antlabs/timer", "ANTLABS_DIR", ""},
		{"github.com/RussellLuo/timingwheel", "RUSSELLLUO_DIR", ""},
		{"github.com/go-timingwheel/timingwheel", "", wheelDir},
	}
	for i := range peers {
		p := &peers[i]
		if p.env != "" {
			p.dir = os.Getenv(p.env)
			if p.dir == "" {
				return fmt.Errorf("%s is not set: the path of a checkout of %s", p.env, p.module)
			}
		}
		if err := checkModule(p); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "peerbench-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintln(os.Stderr, "peers: the module is in", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	var mod strings.Builder
	mod.WriteString("module peerbench\n\ngo 1.24\n\n")
	for _, p := range peers {
		fmt.Fprintf(&mod, "require %s v0.0.0-00010101000000-000000000000\n", p.module)
	}
	mod.WriteString("\n")
	for _, p := range peers {
		fmt.Fprintf(&mod, "replace %s => %s\n", p.module, p.dir)
	}
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte(mod.String()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "peers_test.go"), benchSource, 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"mod", "tidy"}, {"test", "-c", "-o", "peers.test", "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = tmp, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go %s in %s: %w", strings.Join(args, " "), tmp, err)
		}
	}
	libs := []string{"wheel", "antlabs", "russellluo"}
	var out strings.Builder
	for i := range count {
		order := append(slices.Clone(libs[i%len(libs):]), libs[:i%len(libs)]...)
		cmd := exec.Command(filepath.Join(tmp, "peers.test"), "-test.run", "^$",
			"-test.bench", "^BenchmarkAfterFuncStop$/"+pattern, "-test.benchtime", benchtime, "-test.count", "1")
		cmd.Dir, cmd.Stderr = tmp, os.Stderr
		cmd.Env = append(os.Environ(), "PEERS_LIBS="+strings.Join(order, ","))
		b, err := cmd.Output()
		os.Stdout.Write(b)
		if err != nil {
			return fmt.Errorf("run %d: %w", i+1, err)
		}
		out.Write(b)
	}
	return printRatios(os.Stdout, out.String())
}

// checkModule fails unless p.dir holds the module p names, and makes the
// path absolute, as a replace directive in another directory needs.
func checkModule(p *peer) error {
	abs, err := filepath.Abs(p.dir)
	if err != nil {
		return err
	}
	p.dir = abs
	f, err := os.Open(filepath.Join(abs, "go.mod"))
	if err != nil {
		return fmt.Errorf("%s: want a checkout of %s: %w", abs, p.module, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			if strings.TrimSpace(m) != p.module {
				return fmt.Errorf("%s holds module %s, want %s", abs, m, p.module)
			}
			return nil
		}
	}
	return fmt.Errorf("%s/go.mod has no module line", abs)
}

// printRatios prints, per size and bucket, the median ns/op of this module
// over each peer's.
func printRatios(w io.Writer, out string) error {
	ns := map[string][]float64{} // "size=64/lib=wheel/bucket=alone" → ns/op per run
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[3] != "ns/op" || !strings.HasPrefix(f[0], "BenchmarkAfterFuncStop/") {
			continue
		}
		name := strings.TrimPrefix(f[0], "BenchmarkAfterFuncStop/")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i] // the GOMAXPROCS suffix
		}
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			return fmt.Errorf("%q: %w", line, err)
		}
		ns[name] = append(ns[name], v)
	}
	for _, size := range []string{"64", "512"} {
		for _, bucket := range []string{"alone", "shared"} {
			med := func(lib string) float64 { return median(ns["size="+size+"/lib="+lib+"/bucket="+bucket]) }
			w0 := med("wheel")
			if w0 == 0 {
				continue
			}
			line := fmt.Sprintf("# size=%s bucket=%s: wheel %.1f ns/op", size, bucket, w0)
			for _, peer := range []string{"antlabs", "russellluo"} {
				if m := med(peer); m > 0 {
					line += fmt.Sprintf("; wheel/%s %.2fx (%.1f ns)", peer, w0/m, m)
				}
			}
			fmt.Fprintln(w, line)
		}
	}
	return nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
