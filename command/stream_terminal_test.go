package command

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/observable"
)

// orderObserver records whether a terminal event came while a value was
// being received.
type orderObserver struct {
	inNext     atomic.Bool
	overlapped atomic.Bool
	entered    chan struct{}
	release    chan struct{}
	done       chan error
}

func (o *orderObserver) OnNext(int) {
	o.inNext.Store(true)
	close(o.entered)
	<-o.release
	o.inNext.Store(false)
}

func (o *orderObserver) OnError(err error) {
	if o.inNext.Load() {
		o.overlapped.Store(true)
	}
	o.done <- err
}

func (o *orderObserver) OnCompleted() { o.done <- nil }

// When the caller leaves while an ObservableCommand's value is being told,
// the execution ends at once (CANCELLED, permits back), but the subscriber
// hears of it only once it has taken the value: an Observer is never called
// concurrently.
func TestStreamTerminalWaitsForTheValueBeingTold(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			c := NewObservable("Stream", func(ctx context.Context, n int) observable.Observable[int] {
				return observable.Create(func(ctx context.Context, o observable.Observer[int]) {
					go o.OnNext(n) // and nothing more: the stream stays open
				})
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: -1}))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			o := &orderObserver{entered: make(chan struct{}), release: make(chan struct{}), done: make(chan error, 1)}
			c.ToObservable(ctx, 7).Subscribe(context.Background(), o)
			recv(t, o.entered, "the value")
			cancel()
			assert.Equal(t, evs("EMIT", "CANCELLED"), h.events(), "ended while the value was being told")
			h.assertReleased("Stream")
			select {
			case err := <-o.done:
				t.Fatalf("terminal event %v while OnNext ran", err)
			default:
			}
			close(o.release)
			err := recv(t, o.done, "the terminal event")
			require.ErrorIs(t, err, context.Canceled)
			assert.False(t, o.overlapped.Load())
		})
	}
}
