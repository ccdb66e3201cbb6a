package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
)

// outcome is what one push came to, as its caller saw it.
type outcome struct {
	Province string
	Latency  time.Duration
	Receipt  receipt
	Err      error
}

// load sends pushes at a steady rate, round robin over the provinces,
// each from a goroutine of its own, as requests reach a service.
type load struct {
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	outcomes []outcome
}

// pusher pushes data to a province: the service with a command per
// province, or the one whose HTTP client's transport makes the commands.
type pusher interface {
	push(ctx context.Context, p *province, data []byte) (receipt, error)
}

func startLoad(ctx context.Context, svc pusher, provinces []*province, rate int) *load {
	l := &load{stop: make(chan struct{}), done: make(chan struct{})}
	go l.run(ctx, svc, provinces, rate)
	return l
}

func (l *load) run(ctx context.Context, svc pusher, provinces []*province, rate int) {
	defer close(l.done)
	var pushes sync.WaitGroup
	defer pushes.Wait()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-tick.C:
		case <-l.stop:
			return
		case <-ctx.Done():
			return
		}
		p := provinces[i%len(provinces)]
		data := fmt.Appendf(nil, `{"province":%q,"batch":%d}`, p.Name, i)
		pushes.Go(func() {
			start := time.Now()
			r, err := svc.push(ctx, p, data)
			l.mu.Lock()
			l.outcomes = append(l.outcomes, outcome{Province: p.Name, Latency: time.Since(start), Receipt: r, Err: err})
			l.mu.Unlock()
		})
	}
}

// finish stops sending and returns the outcomes once every push sent has
// its answer.
func (l *load) finish() []outcome {
	close(l.stop)
	<-l.done
	return l.outcomes
}

// loadFor sends pushes for d and returns their outcomes.
func loadFor(ctx context.Context, d time.Duration, svc pusher, provinces []*province, rate int) []outcome {
	l := startLoad(ctx, svc, provinces, rate)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return l.finish()
}

// tally sums up outcomes.
type tally struct {
	pushes, ok int
	failures   map[command.FailureType]int // pushes answered by the fallback, by reason
	errors     int                         // pushes that got an error
	latencies  []time.Duration             // sorted
}

// tallyOf sums up the outcomes of the provinces keep selects.
func tallyOf(outcomes []outcome, keep func(province string) bool) tally {
	t := tally{failures: map[command.FailureType]int{}}
	for _, o := range outcomes {
		if !keep(o.Province) {
			continue
		}
		t.pushes++
		t.latencies = append(t.latencies, o.Latency)
		switch {
		case o.Err != nil:
			t.errors++
		case o.Receipt.Degraded:
			t.failures[o.Receipt.Failure]++
		default:
			t.ok++
		}
	}
	slices.Sort(t.latencies)
	return t
}

// percentile returns the latency below which p percent of the pushes
// fell.
func (t tally) percentile(p float64) time.Duration {
	if len(t.latencies) == 0 {
		return 0
	}
	i := int(float64(len(t.latencies)-1) * p / 100)
	return t.latencies[i]
}

// successRate returns the share of pushes that succeeded, in percent.
func (t tally) successRate() float64 {
	if t.pushes == 0 {
		return 0
	}
	return 100 * float64(t.ok) / float64(t.pushes)
}

// summary reads like "870/870 pushes succeeded (100.0%)".
func (t tally) summary() string {
	return fmt.Sprintf("%d/%d pushes succeeded (%.1f%%)", t.ok, t.pushes, t.successRate())
}

// reasons reads like "6 timed out, 12 rejected by the pool, 22
// short-circuited: answered by the fallback".
func (t tally) reasons() string {
	s := fmt.Sprintf("%d timed out, %d rejected by the pool, %d short-circuited",
		t.failures[command.TimeoutFailure], t.failures[command.PoolRejectedFailure], t.failures[command.ShortCircuitFailure])
	if n := t.failures[command.CommandFailure]; n > 0 {
		s += fmt.Sprintf(", %d failed", n)
	}
	s += ": answered by the fallback"
	if t.errors > 0 {
		s += fmt.Sprintf("; %d errors", t.errors)
	}
	return s
}
