package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
)

// The numbers of the seed.
const (
	rate           = 30                     // requests a second to service A, each calling B
	usualLatency   = 200 * time.Millisecond // B's answer time
	slowLatency    = 500 * time.Millisecond // B's answer time at its worst
	goodTimeout    = 300 * time.Millisecond // the seed's advice
	tooLongTimeout = 500 * time.Millisecond // what the seed warns against
)

// phase is a stretch of time during which B answers in latency.
type phase struct {
	name    string
	latency time.Duration
}

// answer is B's answer, or the fallback's.
type answer struct {
	Body     string
	Degraded bool                // the fallback answered
	Failure  command.FailureType // why, when Degraded
}

// fallbackAnswer is the fallback of part 1: a default answer, labelled
// with the reason B's could not be used.
func fallbackAnswer(ctx context.Context, _ struct{}, err error) (answer, error) {
	a := answer{Body: "default", Degraded: true}
	var cmdErr *command.Error
	if errors.As(err, &cmdErr) {
		a.Failure = cmdErr.Failure
	}
	return a, nil
}

// callResult is what a call to B came to, as A's caller saw it.
type callResult struct {
	answer
	wait time.Duration
	err  error
}

// sizing runs part 1: one load, two pools of the seed's size, one with the
// good timeout and one with the long one, against a B that slows down for
// a phase.
func sizing(ctx context.Context, w io.Writer, phaseLength time.Duration) error {
	b := &slowBackend{}
	server := httptest.NewServer(b)
	defer server.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	defer client.CloseIdleConnections()

	workers := poolSize(rate, usualLatency)
	fmt.Fprintf(w, "part 1, sizing: %d requests/s, B answers in %v: %d/s x %.1fs + 4 = %d workers\n",
		rate, usualLatency, rate, usualLatency.Seconds(), workers)

	reg := command.NewRegistry()
	defer reg.Close()
	timeouts := []time.Duration{goodTimeout, tooLongTimeout}
	var calls []*command.Command[struct{}, answer]
	for _, timeout := range timeouts {
		key := fmt.Sprintf("CallB-%v", timeout)
		if err := reg.ConfigurePool(key, command.PoolConfig{CoreSize: workers}); err != nil {
			return err
		}
		calls = append(calls, command.New(key, func(ctx context.Context, _ struct{}) (answer, error) {
			body, err := get(ctx, client, server.URL)
			return answer{Body: string(body)}, err
		}, command.WithRegistry(reg), command.WithConfig(command.Config{
			Timeout: timeout,
			// The breaker is off so that the pools show alone; with
			// it, both would open the circuit while B is slow.
			Breaker: breaker.Config{Disabled: true},
		})).WithFallback(fallbackAnswer))
	}

	phases := []phase{
		{"B answers in 200ms", usualLatency},
		{"B slows down to 500ms", slowLatency},
		{"B is back at 200ms", usualLatency},
	}
	// results[phase][timeout] holds the calls that started in the phase.
	results := make([][][]callResult, len(phases))
	var mu sync.Mutex
	var inFlight sync.WaitGroup
	tick := time.NewTicker(time.Second / rate)
	defer tick.Stop()
	for i, ph := range phases {
		results[i] = make([][]callResult, len(calls))
		b.setLatency(ph.latency)
		end := time.NewTimer(phaseLength)
	load:
		for {
			select {
			case <-tick.C:
			case <-end.C:
				break load
			case <-ctx.Done():
				end.Stop()
				inFlight.Wait()
				return ctx.Err()
			}
			for j, c := range calls {
				inFlight.Go(func() {
					r := call(ctx, c)
					mu.Lock()
					results[i][j] = append(results[i][j], r)
					mu.Unlock()
				})
			}
		}
	}
	inFlight.Wait()

	header := []string{""}
	for _, timeout := range timeouts {
		header = append(header, fmt.Sprintf("pool of %d, timeout %v", workers, timeout))
	}
	printRow(w, header)
	for i, ph := range phases {
		row := []string{ph.name}
		for j := range calls {
			row = append(row, summarize(results[i][j]))
		}
		printRow(w, row)
	}
	return nil
}

// printRow prints the cells of a row of the table in columns.
func printRow(w io.Writer, cells []string) {
	line := fmt.Sprintf("  %-24s", cells[0])
	for _, c := range cells[1:] {
		line += fmt.Sprintf("  %-44s", c)
	}
	fmt.Fprintln(w, strings.TrimRight(line, " "))
}

// call calls B through c and times the call.
func call(ctx context.Context, c *command.Command[struct{}, answer]) callResult {
	start := time.Now()
	a, err := c.Execute(ctx, struct{}{})
	return callResult{answer: a, wait: time.Since(start), err: err}
}

// summarize reads like "90 ok, 0 timed out, 0 rejected, 0 failed, p99
// 203ms"; failed counts the calls the fallback answered for any other
// reason (B's error, a short circuit).
func summarize(rs []callResult) string {
	var ok, timedOut, rejected, failed, errs int
	waits := make([]time.Duration, 0, len(rs))
	for _, r := range rs {
		waits = append(waits, r.wait)
		switch {
		case r.err != nil:
			errs++
		case !r.Degraded:
			ok++
		case r.Failure == command.TimeoutFailure:
			timedOut++
		case r.Failure == command.PoolRejectedFailure:
			rejected++
		default:
			failed++
		}
	}
	slices.Sort(waits)
	p99 := time.Duration(0)
	if len(waits) > 0 {
		p99 = waits[(len(waits)-1)*99/100]
	}
	s := fmt.Sprintf("%d ok, %d timed out, %d rejected, %d failed, p99 %v", ok, timedOut, rejected, failed, p99.Round(time.Millisecond))
	if errs > 0 {
		s += fmt.Sprintf(", %d errors", errs)
	}
	return s
}
