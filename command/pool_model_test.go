package command

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// Calls of a pool-isolated command (by Queue and by Execute) arriving,
// their runs answering, callers leaving, timeouts passing and the pool
// resized live, in a random order, give what a model of Hystrix's thread
// pool says: a call runs at once when a slot is free and nothing waits,
// waits in a FIFO queue of min(MaxQueueSize, QueueSizeRejectionThreshold)
// places otherwise, or is rejected; a run that answers, or ends with its
// context, frees its slot for the first call waiting; a run that ignores
// the end of its context keeps its slot until it returns, whatever its
// caller got; a call that leaves or times out while waiting leaves the
// queue and never runs. Every caller gets its value, ErrPoolRejected,
// ErrTimeout or context.Canceled as the model says, the runs start in
// the model's order, and the pool's metrics report the runs holding a
// slot, the queue, and the runs and rejections counted.
func TestPoolIsolationFollowsTheModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := newPoolModel(rt)
		defer m.reg.Close()
		rt.Repeat(map[string]func(*rapid.T){
			"call":      m.call,
			"answer":    m.answer,
			"leave":     m.leave,
			"advance":   m.advance,
			"configure": m.configure,
			"":          m.check,
		})
		m.finish()
	})
}

// poolRun is one run of the model's command: it tells the test when it
// starts, then answers when released, or ends with its context unless it
// ignores it.
type poolRun struct {
	id      int
	ctx     context.Context
	release chan struct{}
}

type poolCaller struct {
	id       int
	stubborn bool // its run ignores the end of its context
	due      time.Duration
	f        *observable.Future[int] // by Queue
	result   chan poolResult         // by Execute
	cancel   context.CancelFunc      // Execute's caller leaving
	state    int
	run      *poolRun
	want     error // once told: nil for its value
	checked  bool
}

type poolResult struct {
	v   int
	err error
}

// A caller's states in the model.
const (
	callerQueued = iota
	callerRunning
	callerTold // got its answer; its run may still hold a slot
)

type poolModel struct {
	rt      *rapid.T
	reg     *Registry
	mc      *clock.Manual
	cmd     *Command[int, int]
	metrics *metricsstream.PoolMetrics
	runs    chan *poolRun
	stub    sync.Map // caller id → stubborn

	core, threshold, maxQueue int
	timeout                   time.Duration // 0: none
	now                       time.Duration
	callers                   []*poolCaller
	queue                     []*poolCaller
	holding                   []*poolCaller // runs started and not returned
	executed, rejected        int
}

func newPoolModel(rt *rapid.T) *poolModel {
	mc := clock.NewManual(requestT0)
	m := &poolModel{rt: rt, mc: mc, reg: NewRegistry(WithClock(mc)), runs: make(chan *poolRun, 64)}
	m.core = rapid.IntRange(1, 3).Draw(rt, "coreSize")
	m.maxQueue = rapid.IntRange(0, 3).Draw(rt, "maxQueueSize")
	m.threshold = rapid.IntRange(1, 3).Draw(rt, "queueSizeRejectionThreshold")
	if rapid.Bool().Draw(rt, "timeout") {
		m.timeout = 50 * time.Millisecond
	}
	if err := m.reg.ConfigurePool("p", PoolConfig{CoreSize: m.core, MaxQueueSize: m.maxQueue, QueueSizeRejectionThreshold: m.threshold}); err != nil {
		rt.Fatal(err)
	}
	timeout := m.timeout
	if timeout == 0 {
		timeout = -1
	}
	cfg := Config{Isolation: PoolIsolation, Pool: "p", Timeout: timeout, MaxConcurrentRequests: 1000, Breaker: breaker.Config{ForceClosed: true}}
	m.cmd = New("k", m.run, WithRegistry(m.reg), WithConfig(cfg))
	m.metrics = m.reg.Metrics().Pool("p", metricsstream.Config{})
	return m
}

func (m *poolModel) run(ctx context.Context, id int) (int, error) {
	r := &poolRun{id: id, ctx: ctx, release: make(chan struct{})}
	m.runs <- r
	stubborn, _ := m.stub.Load(id)
	if stubborn.(bool) {
		<-r.release
		return id, nil
	}
	select {
	case <-r.release:
		return id, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// call makes a call a millisecond after the last one, so that no two
// timeouts fall at the same time.
func (m *poolModel) call(rt *rapid.T) {
	m.moveTo(rt, m.now+time.Millisecond)
	k := &poolCaller{id: len(m.callers), stubborn: rapid.Bool().Draw(rt, "stubborn"), due: m.now + m.timeout}
	m.callers = append(m.callers, k)
	m.stub.Store(k.id, k.stubborn)
	if rapid.Bool().Draw(rt, "byQueue") {
		k.f = m.cmd.Queue(context.Background(), k.id)
	} else {
		ctx, cancel := context.WithCancel(context.Background())
		k.result, k.cancel = make(chan poolResult, 1), cancel
		go func() {
			v, err := m.cmd.Execute(ctx, k.id)
			k.result <- poolResult{v, err}
		}()
	}
	switch {
	case len(m.queue) == 0 && len(m.holding) < m.core:
		m.start(rt, k)
	case len(m.queue) < min(max(m.maxQueue, 0), m.threshold):
		k.state = callerQueued
		m.queue = append(m.queue, k)
		m.awaitQueue(rt)
	default:
		m.rejected++
		m.tell(rt, k, ErrPoolRejected)
	}
}

// start is k's run starting: it must come next.
func (m *poolModel) start(rt *rapid.T, k *poolCaller) {
	r := recv(rt, m.runs, fmt.Sprintf("the run of call %d to start", k.id))
	if r.id != k.id {
		rt.Fatalf("the run of call %d started, want call %d's", r.id, k.id)
	}
	k.run, k.state = r, callerRunning
	m.holding = append(m.holding, k)
}

// tell is k getting its answer, want (nil for its value).
func (m *poolModel) tell(rt *rapid.T, k *poolCaller, want error) {
	k.state, k.want = callerTold, want
	var got poolResult
	what := fmt.Sprintf("the answer of call %d, %v", k.id, want)
	if k.f != nil {
		recv(rt, k.f.Done(), what)
		got.v, got.err = k.f.Get(context.Background())
	} else {
		got = recv(rt, k.result, what)
	}
	switch {
	case want == nil && (got.err != nil || got.v != k.id):
		rt.Fatalf("call %d got %d, %v; want its value", k.id, got.v, got.err)
	case want != nil && !errors.Is(got.err, want):
		rt.Fatalf("call %d got %d, %v; want %v", k.id, got.v, got.err, want)
	}
}

// freed is k's run returning: its slot goes to the first call waiting,
// if the pool's size allows.
func (m *poolModel) freed(rt *rapid.T, k *poolCaller) {
	m.holding = slices.DeleteFunc(m.holding, func(x *poolCaller) bool { return x == k })
	m.executed++
	for len(m.queue) > 0 && len(m.holding) < m.core {
		next := m.queue[0]
		m.queue = m.queue[1:]
		m.start(rt, next)
	}
	// The run returns on its worker, which frees the slot after the
	// caller (if any) was told: a call made now must find it free.
	awaitCount(rt, "the runs holding a slot", m.metrics.ActiveCount, len(m.holding))
}

func (m *poolModel) answer(rt *rapid.T) {
	if len(m.holding) == 0 {
		rt.Skip("no run holds a slot")
	}
	k := rapid.SampledFrom(m.holding).Draw(rt, "answering")
	close(k.run.release)
	if k.state == callerRunning {
		m.tell(rt, k, nil)
	}
	m.freed(rt, k)
}

func (m *poolModel) leave(rt *rapid.T) {
	var waiting []*poolCaller
	for _, k := range m.callers {
		if k.state != callerTold {
			waiting = append(waiting, k)
		}
	}
	if len(waiting) == 0 {
		rt.Skip("nobody waits")
	}
	k := rapid.SampledFrom(waiting).Draw(rt, "leaving")
	if k.f != nil {
		k.f.Cancel()
	} else {
		k.cancel()
	}
	m.ended(rt, k, context.Canceled)
}

// ended is k's caller leaving, or timing out, with err: a waiting call
// leaves the queue, and a run that heeds its context returns.
func (m *poolModel) ended(rt *rapid.T, k *poolCaller, err error) {
	state := k.state
	m.tell(rt, k, err)
	switch {
	case state == callerQueued:
		m.queue = slices.DeleteFunc(m.queue, func(x *poolCaller) bool { return x == k })
	case !k.stubborn:
		m.freed(rt, k)
	}
}

// advance moves the clock by up to twice the timeout.
func (m *poolModel) advance(rt *rapid.T) {
	d := time.Duration(rapid.Int64Range(1, int64(100*time.Millisecond)).Draw(rt, "advanceBy"))
	m.moveTo(rt, m.now+d)
}

// moveTo moves the clock to to, one timeout at a time, each caller that
// waits past its timeout getting ErrTimeout.
func (m *poolModel) moveTo(rt *rapid.T, to time.Duration) {
	for m.timeout > 0 {
		var next *poolCaller
		for _, k := range m.callers {
			if k.state != callerTold && k.due <= to && (next == nil || k.due < next.due) {
				next = k
			}
		}
		if next == nil {
			break
		}
		m.mc.Advance(next.due - m.now)
		m.now = next.due
		m.ended(rt, next, ErrTimeout)
	}
	m.mc.Advance(to - m.now)
	m.now = to
}

func (m *poolModel) configure(rt *rapid.T) {
	m.core = rapid.IntRange(1, 3).Draw(rt, "newCoreSize")
	m.threshold = rapid.IntRange(1, 3).Draw(rt, "newQueueSizeRejectionThreshold")
	if err := m.reg.ConfigurePool("p", PoolConfig{CoreSize: m.core, MaxQueueSize: m.maxQueue, QueueSizeRejectionThreshold: m.threshold}); err != nil {
		rt.Fatal(err)
	}
	// A larger pool starts the calls waiting at once, each on a worker of
	// its own: their runs start in any order.
	var starting []*poolCaller
	for len(m.queue) > 0 && len(m.holding)+len(starting) < m.core {
		starting = append(starting, m.queue[0])
		m.queue = m.queue[1:]
	}
	for range starting {
		r := recv(rt, m.runs, "the runs of the calls waiting to start")
		i := slices.IndexFunc(starting, func(k *poolCaller) bool { return k.id == r.id && k.run == nil })
		if i < 0 {
			rt.Fatalf("the run of call %d started, which was not waiting", r.id)
		}
		k := starting[i]
		k.run, k.state = r, callerRunning
		m.holding = append(m.holding, k)
	}
}

// awaitQueue waits for the pool's queue to hold what the model's does: a
// call by Execute is made on a goroutine of its own.
func (m *poolModel) awaitQueue(rt *rapid.T) {
	awaitCount(rt, "the calls queued", m.metrics.QueueSize, len(m.queue))
}

// check waits for the runs that returned to have freed their slots, then
// compares the pool's counts with the model's.
func (m *poolModel) check(rt *rapid.T) {
	awaitCount(rt, "the runs holding a slot", m.metrics.ActiveCount, len(m.holding))
	m.awaitQueue(rt)
	select {
	case r := <-m.runs:
		rt.Fatalf("the run of call %d started, which the model did not start", r.id)
	default:
	}
}

// awaitCount waits until count() is want: what goroutines of the pool do
// after they told the test.
func awaitCount(rt *rapid.T, what string, count func() int64, want int) {
	waitFor(rt, fmt.Sprintf("%s to be %d", what, want), func() bool { return count() == int64(want) })
}

// finish answers every run, then checks the pool's cumulative counts.
func (m *poolModel) finish() {
	for len(m.holding) > 0 {
		k := m.holding[0]
		close(k.run.release)
		if k.state == callerRunning {
			m.tell(m.rt, k, nil)
		}
		m.freed(m.rt, k)
	}
	m.check(m.rt)
	m.mc.Advance(time.Second) // closes the metrics' bucket
	if got := m.metrics.CumulativeCount(metricsstream.PoolExecuted); got != int64(m.executed) {
		m.rt.Fatalf("%d runs counted, want %d", got, m.executed)
	}
	if got := m.metrics.CumulativeCount(metricsstream.PoolRejection); got != int64(m.rejected) {
		m.rt.Fatalf("%d rejections counted, want %d", got, m.rejected)
	}
}
