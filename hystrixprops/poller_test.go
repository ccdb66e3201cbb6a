package hystrixprops

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
)

// poller runs one of a Source's polls (PollFile, PollURL) on a goroutine,
// every minute of mc, and keeps what it reports.
type poller struct {
	t       *testing.T
	mc      *clock.Manual
	mu      sync.Mutex
	reports []string
	cancel  context.CancelFunc
	done    chan error
}

// startPoller starts poll, which the poller gives its context and its
// report function.
func startPoller(t *testing.T, mc *clock.Manual, poll func(ctx context.Context, report func(error)) error) *poller {
	ctx, cancel := context.WithCancel(context.Background())
	p := &poller{t: t, mc: mc, cancel: cancel, done: make(chan error, 1)}
	go func() {
		p.done <- poll(ctx, func(err error) {
			p.mu.Lock()
			p.reports = append(p.reports, err.Error())
			p.mu.Unlock()
		})
	}()
	return p
}

// next waits until the poll's timer is armed, moves the clock a minute on
// and waits until the timer is armed again: the poll has read. The first
// next sees the first read, which is at once.
func (p *poller) next() {
	p.t.Helper()
	waitCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	require.NoError(p.t, p.mc.BlockUntil(waitCtx, 1), "the poll's timer")
	p.mc.Advance(time.Minute)
	require.NoError(p.t, p.mc.BlockUntil(waitCtx, 1), "the poll's timer again")
}

// reported returns what the poll has reported.
func (p *poller) reported() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.reports...)
}

// stop ends the poll and returns what it returned.
func (p *poller) stop() error {
	p.cancel()
	return <-p.done
}

// polledGetUser returns a manual clock, a Source of a registry on it
// (closed when t ends) that configures the registry's GetUser command,
// and a reading of GetUser's error threshold: what the tests of PollFile
// and PollURL poll into.
func polledGetUser(t *testing.T) (*clock.Manual, *Source, func() int) {
	mc := clock.NewManual(time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC))
	r := command.NewRegistry(command.WithClock(mc))
	t.Cleanup(r.Close)
	s := NewSource(r, nil)
	command.New("GetUser", succeed, command.WithRegistry(r), command.WithConfig(s.Command("GetUser", command.Config{})))
	threshold := func() int { return r.Breaker("GetUser").Config().ErrorThresholdPercentage }
	return mc, s, threshold
}
