package adaptive

import (
	"fmt"
	"io"
	"time"
)

// WriteTable writes results as a markdown table, one row per result.
func WriteTable(w io.Writer, results []Result) {
	fmt.Fprintln(w, "| load | configuration | answered | answered while slow | fallback | p50 answered | p99 answered | full throughput after recovery | pool size while slow |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|")
	for _, r := range results {
		recovery := "never"
		if r.Recovered {
			recovery = r.Recovery.String()
		}
		size := fmt.Sprint(r.LimitMin)
		if r.LimitMax != r.LimitMin {
			size = fmt.Sprintf("%d–%d", r.LimitMin, r.LimitMax)
		}
		fallback := percent(r.Fallback, r.Calls)
		if r.Errors > 0 {
			fallback += fmt.Sprintf(" (%d errors)", r.Errors)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %v | %v | %s | %s |\n",
			r.Variant.Name, r.Row.Name, percent(r.Answered, r.Calls), percent(r.AnsweredSlow, r.Slow), fallback,
			r.P50.Round(time.Millisecond), r.P99.Round(time.Millisecond), recovery, size)
	}
}

func percent(n, of int) string {
	if of == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(of))
}
