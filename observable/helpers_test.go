package observable

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errBoom = errors.New("boom")

// recorder is an Observer that records what it receives and checks the Rx
// grammar: no call after a terminal event, no concurrent calls.
type recorder[T any] struct {
	inFlight atomic.Int32
	done     chan struct{}

	mu         sync.Mutex
	values     []T
	err        error
	completed  bool
	violations []string
}

func newRecorder[T any]() *recorder[T] { return &recorder[T]{done: make(chan struct{})} }

func (r *recorder[T]) enter(what string) {
	if r.inFlight.Add(1) != 1 {
		r.violate("concurrent " + what)
	}
	r.mu.Lock()
	terminated := r.err != nil || r.completed
	r.mu.Unlock()
	if terminated {
		r.violate(what + " after a terminal event")
	}
}

func (r *recorder[T]) leave() { r.inFlight.Add(-1) }

func (r *recorder[T]) violate(s string) {
	r.mu.Lock()
	r.violations = append(r.violations, s)
	r.mu.Unlock()
}

func (r *recorder[T]) OnNext(v T) {
	r.enter("OnNext")
	defer r.leave()
	r.mu.Lock()
	r.values = append(r.values, v)
	r.mu.Unlock()
}

func (r *recorder[T]) OnError(err error) {
	r.enter("OnError")
	defer r.leave()
	r.mu.Lock()
	r.err = err
	r.mu.Unlock()
	close(r.done)
}

func (r *recorder[T]) OnCompleted() {
	r.enter("OnCompleted")
	defer r.leave()
	r.mu.Lock()
	r.completed = true
	r.mu.Unlock()
	close(r.done)
}

// snapshot returns what was received so far.
func (r *recorder[T]) snapshot() (values []T, err error, completed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.values...), r.err, r.completed
}

// wait waits for a terminal event, failing the test after a generous
// bound (a safety net against hangs, not a timing assertion).
func (r *recorder[T]) wait(t *testing.T) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		t.Fatal("no terminal event")
	}
}

// terminated reports whether a terminal event has arrived.
func (r *recorder[T]) terminated() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// check asserts the recorded values and terminal event and that the
// grammar held.
func (r *recorder[T]) check(t *testing.T, want []T, wantErr error, wantCompleted bool) {
	t.Helper()
	values, err, completed := r.snapshot()
	assert.Equal(t, want, values, "values")
	if wantErr == nil {
		assert.NoError(t, err)
	} else {
		assert.ErrorIs(t, err, wantErr)
	}
	assert.Equal(t, wantCompleted, completed, "completed")
	r.mu.Lock()
	assert.Empty(t, r.violations, "Rx grammar")
	r.mu.Unlock()
}

// waitDone waits for a channel to close, with the same safety net.
func waitDone(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: not done", what)
	}
}

// probe is a Create source that records how its subscriptions end.
type probe struct {
	subscribed   atomic.Int32
	subscribedCh chan struct{} // closed at the first subscription
	once         sync.Once
	stopped      chan struct{} // closed when the producer saw its ctx done
	stopErr      atomic.Value
}

func newProbe() *probe {
	return &probe{subscribedCh: make(chan struct{}), stopped: make(chan struct{})}
}

func (p *probe) subscribe() {
	p.subscribed.Add(1)
	p.once.Do(func() { close(p.subscribedCh) })
}

func (p *probe) subscribedSignal() <-chan struct{} { return p.subscribedCh }

// infinite emits 0, 1, 2... synchronously until its ctx is done.
func (p *probe) infinite() Observable[int] {
	return Create(func(ctx context.Context, o Observer[int]) {
		p.subscribe()
		for i := 0; ctx.Err() == nil; i++ {
			o.OnNext(i)
		}
		p.stopErr.Store(fmt.Sprint(ctx.Err()))
		close(p.stopped)
	})
}

// async emits vs from a goroutine and then waits for ctx to be done
// before reporting it stopped.
func (p *probe) async(vs ...int) Observable[int] {
	return Create(func(ctx context.Context, o Observer[int]) {
		p.subscribe()
		go func() {
			for _, v := range vs {
				o.OnNext(v)
			}
			<-ctx.Done()
			close(p.stopped)
		}()
	})
}

func (p *probe) requireStopped(t *testing.T) {
	t.Helper()
	waitDone(t, p.stopped, "producer")
}

func mustPanicWith(t *testing.T, substr string, f func()) {
	t.Helper()
	defer func() {
		r := recover()
		require.NotNil(t, r, "no panic")
		assert.Contains(t, fmt.Sprint(r), substr)
	}()
	f()
}
