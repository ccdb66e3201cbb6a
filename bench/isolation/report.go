package isolation

import (
	"fmt"
	"io"
	"time"
)

// Scenario is the name of a run's failure: the baseline or some servers
// hung.
func Scenario(cfg Config) string {
	cfg = cfg.withDefaults()
	if cfg.Hung == 0 {
		return "no failure"
	}
	return fmt.Sprintf("%d of %d hung", cfg.Hung, cfg.Servers)
}

// WriteMarkdown writes results as a markdown table, preceded by the load
// they share (that of the first result) and followed by how each client
// kind was set up.
func WriteMarkdown(w io.Writer, results []Result) error {
	if len(results) == 0 {
		_, err := fmt.Fprintln(w, "No runs.")
		return err
	}
	cfg := results[0].Config
	p := &printer{w: w}
	p.printf("%d requests/s for %v, round robin over %d servers on 127.0.0.1 (healthy ones answer in %v ± 50 %%); "+
		"the service handles %d requests at once and its callers wait at most %v. "+
		"Only requests for healthy servers are counted.\n\n",
		cfg.Rate, cfg.Duration, cfg.Servers, cfg.Latency, cfg.Capacity, cfg.Deadline)
	p.printf("| scenario | client | requests | answered | p50 | p99 | max | conns held by hung server |\n")
	p.printf("|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		p.printf("| %s | %s | %d | %.1f %% | %s | %s | %s | %d |\n",
			Scenario(r.Config), r.Client, r.Healthy, 100*r.SuccessRate(),
			round(r.P50), round(r.P99), round(r.Max), r.HungConnections)
	}
	p.printf("\n")
	seen := map[string]bool{}
	for _, r := range results {
		if seen[r.Client] {
			continue
		}
		seen[r.Client] = true
		for _, k := range kinds {
			if k.Name == r.Client {
				p.printf("- %s: %s\n", k.Name, k.Setup(r.Config))
			}
		}
	}
	return p.err
}

// round shortens d for a table: milliseconds with one decimal below 10 s.
func round(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// printer keeps the first write error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}
