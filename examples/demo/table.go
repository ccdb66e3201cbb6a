package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// display says how the demo shows its commands where it was started.
type display struct {
	// every is how often the table is drawn; 0 draws none.
	every time.Duration
	// terminal redraws the table in place, as a terminal shows it;
	// otherwise each table is written below the last, as plain lines
	// for a pipe or a log.
	terminal bool
	// width returns the terminal's width in columns, 0 when unknown: the
	// lines are cut to it, since a line that wraps would take two rows
	// and the redraw would go up too few.
	width func() int
}

// displayFor returns the display of out: a table redrawn in place every
// period when out is a terminal, plain lines every period otherwise.
func displayFor(out io.Writer, every time.Duration) display {
	f, ok := out.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return display{every: every}
	}
	return display{every: every, terminal: true, width: func() int {
		w, _, err := term.GetSize(int(f.Fd()))
		if err != nil {
			return 0
		}
		return w
	}}
}

// start draws the table of metrics on out every d.every until ctx ends;
// call the returned function to wait for the last table to be drawn.
func (d display) start(ctx context.Context, out io.Writer, metrics *metricsstream.Registry) (wait func()) {
	if d.every <= 0 {
		return func() {}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		started := time.Now()
		tick := time.NewTicker(d.every)
		defer tick.Stop()
		drawn := 0 // lines of the table on the terminal
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			lines := tableLines(metrics, time.Since(started))
			var b strings.Builder
			if d.terminal {
				if drawn > 0 {
					fmt.Fprintf(&b, "\x1b[%dA", drawn) // up to the table's first line
				}
				width := 0
				if d.width != nil {
					width = d.width()
				}
				for _, l := range lines {
					if width > 1 && len(l) >= width {
						l = l[:width-1] // the lines are ASCII
					}
					b.WriteString("\x1b[2K" + l + "\n") // each line cleared, then written
				}
				for range drawn - len(lines) { // a shorter table clears what is left
					b.WriteString("\x1b[2K\n")
				}
				drawn = max(drawn, len(lines))
			} else {
				for _, l := range lines {
					b.WriteString(l + "\n")
				}
			}
			_, _ = io.WriteString(out, b.String())
		}
	})
	return wg.Wait
}

// tableLines returns the table of the commands and collapsers of metrics
// after elapsed: one line per command with its request rate over the
// rolling window, error percentage (the health window's, as the breaker
// judges it), p99 execution latency, circuit and pool or semaphore use,
// and whether it injects faults.
func tableLines(metrics *metricsstream.Registry, elapsed time.Duration) []string {
	var snaps []metricsstream.CommandSnapshot
	for m := range metrics.Commands() {
		snaps = append(snaps, m.Snapshot())
	}
	slices.SortFunc(snaps, func(a, b metricsstream.CommandSnapshot) int { return cmp.Compare(a.Key, b.Key) })

	lines := []string{
		fmt.Sprintf("rxhystrix demo, %s in", elapsed.Truncate(time.Second)),
		fmt.Sprintf("%-20s %8s %6s %7s  %-12s %s", "COMMAND", "REQ/S", "ERR%", "P99", "CIRCUIT", "POOL OR SEMAPHORE IN USE"),
	}
	for _, s := range snaps {
		line := fmt.Sprintf("%-20s %8.1f %5d%% %7s  %-12s %s",
			s.Key, float64(executions(s))/window(s.Config, elapsed), s.Health.ErrorPercentage,
			p99(s.Latency.Execution), circuit(s), use(metrics, s))
		if s.Status.Faults.Enabled {
			line += ", injecting faults" // set at /faults: the failures are not the downstream's
		}
		lines = append(lines, line)
	}
	var collapsers []string
	for c := range metrics.Collapsers() {
		batches := c.RollingCount(metricsstream.CollapserBatchExecuted)
		requests := c.RollingCount(metricsstream.CollapserAddedToBatch)
		line := fmt.Sprintf("collapser %-10s %6.1f batches/s", c.Key(), float64(batches)/window(c.Config(), elapsed))
		if batches > 0 {
			line += fmt.Sprintf(", %.1f requests a batch", float64(requests)/float64(batches))
		}
		collapsers = append(collapsers, line)
	}
	slices.Sort(collapsers)
	return append(lines, collapsers...)
}

// executions counts the executions in the rolling window: every outcome
// but the fallbacks'.
func executions(s metricsstream.CommandSnapshot) int64 {
	n := int64(0)
	for _, e := range []metricsstream.EventType{
		metricsstream.Success, metricsstream.Failure, metricsstream.Timeout, metricsstream.ShortCircuited,
		metricsstream.PoolRejected, metricsstream.SemaphoreRejected, metricsstream.BadRequest,
	} {
		n += s.Rolling[e]
	}
	return n
}

// window is the seconds the rolling counts of c span after elapsed: the
// rolling window (10s by default), or less in the demo's first seconds,
// so that a rate reads right from the start.
func window(c metricsstream.Config, elapsed time.Duration) float64 {
	w := c.RollingWindow
	if w <= 0 {
		w = 10 * time.Second
	}
	return max(min(w, elapsed.Truncate(time.Second)), time.Second).Seconds()
}

// p99 is the 99th percentile of d in milliseconds, or "-" while no
// percentile bucket has closed (10s by default).
func p99(d metricsstream.Distribution) string {
	if d.Count() == 0 {
		return "-"
	}
	return fmt.Sprintf("%dms", d.Percentile(99).Milliseconds())
}

func circuit(s metricsstream.CommandSnapshot) string {
	switch {
	case s.Status.Properties.ForceOpen:
		return "Forced open"
	case s.Status.CircuitBreakerOpen:
		return "OPEN"
	case s.Status.CircuitBreakerThrottle > 0:
		return fmt.Sprintf("Throttle %.0f%%", 100*s.Status.CircuitBreakerThrottle)
	}
	return "Closed"
}

// use says how much of its isolation a command uses: its pool's busy
// workers of its core size, and its queue, or its semaphore's permits.
func use(metrics *metricsstream.Registry, s metricsstream.CommandSnapshot) string {
	if s.Status.Properties.Isolation == "SEMAPHORE" {
		return fmt.Sprintf("semaphore %d/%d", s.ConcurrentExecutions, s.Status.Properties.MaxConcurrentRequests)
	}
	p, ok := metrics.LookupPool(s.Status.Pool)
	if !ok {
		return "pool " + s.Status.Pool + " (never used)"
	}
	ps := p.Snapshot()
	u := fmt.Sprintf("pool %s %d/%d", ps.Key, ps.ActiveCount, ps.Status.CoreSize)
	if ps.QueueSize > 0 {
		u += fmt.Sprintf(", %d queued", ps.QueueSize)
	}
	if r := ps.Rolling[metricsstream.PoolRejection]; r > 0 {
		u += fmt.Sprintf(", %d rejected", r)
	}
	return u
}
