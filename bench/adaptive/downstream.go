package adaptive

import (
	"context"
	"time"
)

// downstream is service B: it works on at most cap(slots) calls at once,
// queues the others in arrival order (a channel's blocked senders are
// served first in, first out), and answers each after latency(now).
type downstream struct {
	slots   chan struct{}
	latency func(now time.Time) time.Duration
}

func newDownstream(capacity int, latency func(time.Time) time.Duration) *downstream {
	return &downstream{slots: make(chan struct{}, capacity), latency: latency}
}

// call is one call to B; it returns ctx's error if the caller leaves
// first, which frees its place in the queue or in service.
func (d *downstream) call(ctx context.Context) error {
	select {
	case d.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-d.slots }()
	t := time.NewTimer(d.latency(time.Now()))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
