package sqlbench

import (
	"slices"
	"time"
)

// Summary is one system's medians over the rounds, per workload. A workload the system did not
// run, or failed in any round, has no figure (zero) and its errors in Errs.
type Summary struct {
	System                                string
	Single, Batch, Fires                  float64 // adds/s, adds/s, fires/s
	LatenessP50, LatenessP99, LatenessMax time.Duration
	Early                                 int // over every round
	Rounds                                int // rounds with a lateness figure
	Errs                                  []string
}

// Summarize returns each system's Summary, in the order systems first appear in results.
func Summarize(results []Result) []Summary {
	var out []Summary
	index := map[string]int{}
	per := map[string]map[Workload][]Result{}
	for _, r := range results {
		if _, ok := index[r.System]; !ok {
			index[r.System] = len(out)
			out = append(out, Summary{System: r.System})
			per[r.System] = map[Workload][]Result{}
		}
		per[r.System][r.Workload] = append(per[r.System][r.Workload], r)
	}
	for i := range out {
		s := &out[i]
		ok := func(w Workload) []Result {
			rs := per[s.System][w]
			failed := false
			for _, r := range rs {
				if r.Err != "" {
					s.Errs = append(s.Errs, string(w)+": "+r.Err)
					failed = true
				}
			}
			if failed {
				return nil
			}
			return rs
		}
		s.Single = median(ok(Single), func(r Result) float64 { return r.PerSec })
		s.Batch = median(ok(Batch), func(r Result) float64 { return r.PerSec })
		s.Fires = median(ok(Fires), func(r Result) float64 { return r.PerSec })
		if late := ok(Lateness); late != nil {
			s.LatenessP50 = time.Duration(median(late, func(r Result) float64 { return float64(r.LatenessP50) }))
			s.LatenessP99 = time.Duration(median(late, func(r Result) float64 { return float64(r.LatenessP99) }))
			s.LatenessMax = time.Duration(median(late, func(r Result) float64 { return float64(r.LatenessMax) }))
			s.Rounds = len(late)
			for _, r := range late {
				s.Early += r.Early
			}
		}
	}
	return out
}

// Ratios returns, for each round in which both ran w without error, a's figure over b's
// (adds/s or fires/s; lateness p99 for Lateness), in round order.
func Ratios(results []Result, a, b string, w Workload) []float64 {
	fig := func(r Result) float64 {
		if w == Lateness {
			return float64(r.LatenessP99)
		}
		return r.PerSec
	}
	byRound := map[int]map[string]float64{}
	var rounds []int
	for _, r := range results {
		if r.Workload != w || r.Err != "" || (r.System != a && r.System != b) {
			continue
		}
		if byRound[r.Round] == nil {
			byRound[r.Round] = map[string]float64{}
			rounds = append(rounds, r.Round)
		}
		byRound[r.Round][r.System] = fig(r)
	}
	slices.Sort(rounds)
	var out []float64
	for _, round := range rounds {
		x, okA := byRound[round][a]
		y, okB := byRound[round][b]
		if okA && okB && y > 0 {
			out = append(out, x/y)
		}
	}
	return out
}

// Median is the median of xs (the mean of the middle two for an even count), 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func median(rs []Result, f func(Result) float64) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = f(r)
	}
	return Median(xs)
}
