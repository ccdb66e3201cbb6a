package hystrix

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
)

// No goroutine outlives a hung run once it returns, nor a circuit once
// Flush has forgotten it and its registry is closed.
func TestNoLeakAfterTimeoutAndFlush(t *testing.T) {
	before := goleak.IgnoreCurrent()
	mc := clock.NewManual(t0)
	reg := command.NewRegistry(command.WithClock(mc))
	old := std.Swap(newEngine(reg))
	withCollectors()
	ConfigureCommand("hung", CommandConfig{Timeout: 50})
	h := newHang()
	var runCtx context.Context
	ch := GoC(context.Background(), "hung", func(ctx context.Context) error {
		runCtx = ctx
		return h.run(ctx) // ignores its context
	}, nil)
	h.wait(t, 1)
	mc.Advance(50 * time.Millisecond)
	if err := await(t, ch); err != ErrTimeout {
		t.Fatalf("GoC = %v; want ErrTimeout", err)
	}
	select {
	case <-runCtx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("run's context was not cancelled at the timeout")
	}
	close(h.release) // the hung run returns
	waitIdle(t, "hung")
	sh := NewStreamHandler()
	sh.Start()
	sh.Stop()
	Flush()
	std.Store(old)
	reg.Close()
	goleak.VerifyNone(t, before)
}
