package reliability

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// The load tests' settings. Time is a manual clock's: a run that is to
// time out moves the clock past its own deadline.
const (
	loadExecutions = 200_000
	loadCallers    = 64
	loadTimeout    = 10 * time.Millisecond
	loadStep       = 100 * time.Microsecond // each caller moves the clock on after each execution
	loadPermits    = 48                     // execution permits under semaphore isolation
	loadFallbacks  = 8                      // fallback permits
	loadCoreSize   = 32
	loadQueue      = 16
	loadPool       = "load-pool"
	stuck          = 10 * time.Second // real time after which a wait is a failure
)

// outcome is what a run does.
type outcome uint8

const (
	succeed    outcome = iota
	fail               // returns errFail
	timeOut            // moves the clock past its deadline and returns when its context ends
	badRequest         // returns BadRequest(errBadInput)
	panicking          // panics with errPanic
	numRandomOutcomes

	hold         // waits on the request's barrier, then succeeds
	failThenHold // fails; its fallback waits on the barrier
)

// weights of the random outcomes, in percent.
var outcomeWeights = [numRandomOutcomes]int{succeed: 60, fail: 12, timeOut: 8, badRequest: 12, panicking: 8}

var (
	errFail     = errors.New("run failed")
	errBadInput = errors.New("bad input")
	errPanic    = errors.New("run panicked")
)

// loadRequest is the input of the load command.
type loadRequest struct {
	outcome outcome
	barrier *barrier
}

// loadResult is what the load command returns: run's value, or the
// fallback's, which says which event made the execution fall back.
type loadResult struct {
	fromFallback bool
	event        metricsstream.EventType
}

// barrier holds the calls that arrive at it until it is released.
type barrier struct {
	arrived atomic.Int64
	release chan struct{}
}

func newBarrier() *barrier { return &barrier{release: make(chan struct{})} }

// wait counts the caller in and waits for the release. It reports false
// if the release never came.
func (b *barrier) wait() bool {
	b.arrived.Add(1)
	select {
	case <-b.release:
		return true
	case <-time.After(stuck):
		return false
	}
}

// loadScene is a command under load on a manual clock, and what its callers
// and its fallback saw.
type loadScene struct {
	t     *testing.T
	clock *clock.Manual
	reg   *command.Registry
	cmd   *command.Command[loadRequest, loadResult]
	cfg   command.Config

	// wrong counts executions whose result contradicts what their run
	// did; last is a description of the latest one.
	wrong atomic.Int64
	last  atomic.Pointer[string]
}

func (s *loadScene) wrongf(format string, args ...any) {
	s.wrong.Add(1)
	msg := fmt.Sprintf(format, args...)
	s.last.Store(&msg)
}

func newLoadScene(t *testing.T, isolation command.Isolation) *loadScene {
	s := &loadScene{t: t, clock: clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	s.reg = command.NewRegistry(command.WithClock(s.clock))
	t.Cleanup(s.reg.Close)
	s.cfg = command.Config{
		Pool:                          loadPool,
		Isolation:                     isolation,
		Timeout:                       loadTimeout,
		MaxConcurrentRequests:         loadPermits,
		FallbackMaxConcurrentRequests: loadFallbacks,
		Breaker: breaker.Config{
			RequestVolumeThreshold:   20,
			ErrorThresholdPercentage: 40, // about the error rate of the outcomes: it trips now and then
			SleepWindow:              5 * loadTimeout,
		},
		// Hystrix's default windows. Rolling buckets of a second: callers
		// move the clock on while others wait for a core, and a completion
		// recorded more than the ring's 16 buckets after its clock reading
		// is dropped by design (the real clock never runs that far ahead
		// of a caller). Health snapshots of 500ms: each sums the health
		// buckets of the window, and a few dozen do.
		Metrics: metricsstream.Config{},
	}
	require.NoError(t, s.reg.ConfigurePool(loadPool, command.PoolConfig{
		CoreSize: loadCoreSize, MaxQueueSize: loadQueue, QueueSizeRejectionThreshold: loadQueue,
	}))
	s.cmd = command.New("load", s.run, command.WithRegistry(s.reg), command.WithConfig(s.cfg)).WithFallback(s.fallback)
	return s
}

func (s *loadScene) run(ctx context.Context, req loadRequest) (loadResult, error) {
	switch req.outcome {
	case fail, failThenHold:
		return loadResult{}, errFail
	case badRequest:
		return loadResult{}, command.BadRequest(errBadInput)
	case panicking:
		panic(errPanic)
	case timeOut:
		s.clock.Advance(loadTimeout)
		<-ctx.Done() // past the deadline: the timeout has fired, or is firing
		return loadResult{}, ctx.Err()
	case hold:
		if !req.barrier.wait() {
			s.wrongf("a held run was never released")
		}
	}
	return loadResult{event: metricsstream.Success}, nil
}

func (s *loadScene) fallback(_ context.Context, req loadRequest, err error) (loadResult, error) {
	var cmdErr *command.Error
	if !errors.As(err, &cmdErr) {
		s.wrongf("fallback got %T %v", err, err)
		return loadResult{fromFallback: true, event: -1}, nil
	}
	event := failureEvent(cmdErr.Failure)
	if cmdErr.Failure == command.CommandFailure {
		var p *command.PanicError
		switch {
		case req.outcome == panicking && !errors.As(cmdErr.Cause, &p):
			s.wrongf("a panicking run failed with %v", cmdErr.Cause)
		case (req.outcome == fail || req.outcome == failThenHold) && !errors.Is(cmdErr.Cause, errFail):
			s.wrongf("a failing run failed with %v", cmdErr.Cause)
		case req.outcome != panicking && req.outcome != fail && req.outcome != failThenHold:
			s.wrongf("a run meant to %v failed with %v", req.outcome, cmdErr.Cause)
		}
	}
	if req.outcome == failThenHold && !req.barrier.wait() {
		s.wrongf("a held fallback was never released")
	}
	runtime.Gosched() // stay in the fallback a moment, so that fallbacks overlap
	return loadResult{fromFallback: true, event: event}, nil
}

// failureEvent is the event recorded for a failure type that reaches the
// fallback.
func failureEvent(f command.FailureType) metricsstream.EventType {
	switch f {
	case command.TimeoutFailure:
		return metricsstream.Timeout
	case command.ShortCircuitFailure:
		return metricsstream.ShortCircuited
	case command.PoolRejectedFailure:
		return metricsstream.PoolRejected
	case command.SemaphoreRejectedFailure:
		return metricsstream.SemaphoreRejected
	}
	return metricsstream.Failure
}

// causeEvent is the event recorded for the cause of a failure whose
// fallback was rejected.
func causeEvent(cause error) metricsstream.EventType {
	switch {
	case errors.Is(cause, command.ErrTimeout):
		return metricsstream.Timeout
	case errors.Is(cause, command.ErrShortCircuited):
		return metricsstream.ShortCircuited
	case errors.Is(cause, command.ErrPoolRejected):
		return metricsstream.PoolRejected
	case errors.Is(cause, command.ErrSemaphoreRejected):
		return metricsstream.SemaphoreRejected
	}
	return metricsstream.Failure
}

// execute runs req through one of the ways of executing a command.
func (s *loadScene) execute(ctx context.Context, way int, req loadRequest) (loadResult, error) {
	switch way {
	case 0:
		return s.cmd.Queue(ctx, req).Get(ctx)
	case 1:
		return s.cmd.ToObservable(ctx, req).First(ctx)
	}
	return s.cmd.Execute(ctx, req)
}

// tally counts the events of executions as their callers saw them.
type tally [metricsstream.NumEventTypes]int64

// observe adds the events of one execution of req that returned v and err.
func (s *loadScene) observe(into *tally, req loadRequest, v loadResult, err error) {
	var cmdErr *command.Error
	switch {
	case err == nil && !v.fromFallback:
		if req.outcome != succeed && req.outcome != hold {
			s.wrongf("a run meant to %v succeeded", req.outcome)
		}
		into[metricsstream.Success]++
	case err == nil:
		if v.event < 0 {
			return
		}
		into[v.event]++
		into[metricsstream.FallbackSuccess]++
	case command.IsBadRequest(err):
		if req.outcome != badRequest || !errors.Is(err, errBadInput) {
			s.wrongf("a run meant to %v returned %v", req.outcome, err)
		}
		into[metricsstream.BadRequest]++
	case errors.As(err, &cmdErr) && cmdErr.Failure == command.FallbackRejectedFailure:
		into[causeEvent(cmdErr.Cause)]++
		into[metricsstream.FallbackRejection]++
	default:
		s.wrongf("execution returned %v", err)
	}
}

func (o outcome) String() string {
	return [...]string{"succeed", "fail", "time out", "return a bad request", "panic", "", "hold", "fail then hold"}[o]
}

// TestLoad runs 200,000 executions with random outcomes over 64
// goroutines, under each isolation, and then checks that nothing was lost
// or counted twice, that nothing is left running, that every permit is
// back, and that no goroutine is left.
func TestLoad(t *testing.T) {
	t.Run("pool", func(t *testing.T) { testLoad(t, command.PoolIsolation) })
	t.Run("semaphore", func(t *testing.T) { testLoad(t, command.SemaphoreIsolation) })
}

func testLoad(t *testing.T, isolation command.Isolation) {
	s := newLoadScene(t, isolation)
	ctx := context.Background()

	var (
		next     atomic.Int64
		mu       sync.Mutex
		observed tally
		wg       sync.WaitGroup
	)
	for caller := range loadCallers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(caller), 0x5eed))
			var mine tally
			for next.Add(1) <= loadExecutions {
				req := loadRequest{outcome: pickOutcome(rng)}
				v, err := s.execute(ctx, rng.IntN(4), req)
				s.observe(&mine, req, v, err)
				s.clock.Advance(loadStep)
			}
			mu.Lock()
			for e := range observed {
				observed[e] += mine[e]
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	if n := s.wrong.Load(); n > 0 {
		t.Errorf("%d executions contradicted their runs; the last: %s", n, *s.last.Load())
	}

	// Every execution is counted once its buckets have closed: the clock
	// moves on by a whole window each time we look, so that completions
	// recorded after their callers returned close too.
	m := s.cmd.Metrics()
	var counted metricsstream.EventTotals
	assert.Eventually(t, func() bool {
		s.clock.Advance(time.Second)
		counted = m.CumulativeCounts()
		return terminals(counted) >= loadExecutions && m.ConcurrentExecutions() == 0
	}, stuck, time.Millisecond, "every execution counted and none running")
	assert.Equal(t, int64(loadExecutions), terminals(counted), "one terminal event per execution: %s", describe(counted))
	for e := range metricsstream.NumEventTypes {
		want := observed[e]
		if e == metricsstream.ExceptionThrown {
			want = observed[metricsstream.BadRequest] + observed[metricsstream.FallbackRejection]
		}
		assert.Equal(t, want, counted[e], "%v: as the callers saw it", e)
	}
	assert.Zero(t, m.ConcurrentExecutions(), "executions still running")
	t.Logf("%v: %s", isolation, describe(counted))

	// Every permit is back: as many calls as there are permits hold them
	// all at once.
	forceClosed := s.cfg
	forceClosed.Breaker.ForceClosed = true
	require.NoError(t, s.reg.Configure("load", forceClosed))
	if isolation == command.SemaphoreIsolation {
		s.holdAll(hold, loadPermits, 0)
	} else {
		s.holdAll(hold, loadCoreSize, loadQueue)
	}
	s.holdAll(failThenHold, loadFallbacks, 0)

	s.reg.Close()
	goleak.VerifyNone(t)
}

// pickOutcome draws an outcome with outcomeWeights.
func pickOutcome(rng *rand.Rand) outcome {
	n := rng.IntN(100)
	for o, w := range outcomeWeights {
		if n < w {
			return outcome(o)
		}
		n -= w
	}
	return succeed
}

// terminals sums the terminal events: one per execution.
func terminals(c metricsstream.EventTotals) int64 {
	var n int64
	for e := range metricsstream.NumEventTypes {
		if e.IsTerminal() {
			n += c[e]
		}
	}
	return n
}

func describe(c metricsstream.EventTotals) string {
	s := ""
	for e := range metricsstream.NumEventTypes {
		if c[e] > 0 {
			s += fmt.Sprintf(" %v=%d", e, c[e])
		}
	}
	return s
}

// holdAll makes n calls of outcome o that all wait on one barrier, and
// queued more calls that wait in the pool's queue, then releases them: all
// must arrive at the barrier at once (every permit was free) and all must
// succeed.
func (s *loadScene) holdAll(o outcome, n, queued int) {
	t := s.t
	t.Helper()
	b := newBarrier()
	ctx := context.Background()
	results := make(chan error, n+queued)
	var wg sync.WaitGroup
	for range n + queued {
		wg.Go(func() {
			v, err := s.cmd.Execute(ctx, loadRequest{outcome: o, barrier: b})
			if err == nil && v.fromFallback != (o == failThenHold) {
				err = fmt.Errorf("result %+v", v)
			}
			results <- err
		})
	}
	defer func() {
		close(b.release)
		wg.Wait()
		close(results)
		for err := range results {
			assert.NoError(t, err, "a call holding a permit or waiting in the queue")
		}
	}()
	require.Eventually(t, func() bool {
		if b.arrived.Load() != int64(n) {
			return false
		}
		if queued == 0 {
			return true
		}
		pm, ok := s.reg.Metrics().LookupPool(loadPool)
		return ok && pm.QueueSize() == int64(queued)
	}, stuck, time.Millisecond, "%d calls of %v hold every permit at once, %d wait in the queue", n, o, queued)
}
