package command

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/observable"
)

// faultRecordingTracer is a recordingTracer whose traces are FaultTraces,
// except those of the keys in untraced, which it does not trace.
type faultRecordingTracer struct {
	*recordingTracer
	untraced map[string]bool
	faults   map[*recordedTrace][]string
}

func newFaultRecordingTracer(untraced ...string) *faultRecordingTracer {
	r := &faultRecordingTracer{recordingTracer: newRecordingTracer(), untraced: map[string]bool{},
		faults: map[*recordedTrace][]string{}}
	for _, k := range untraced {
		r.untraced[k] = true
	}
	return r
}

func (r *faultRecordingTracer) Begin(ctx context.Context, key string, start time.Time) ExecutionTrace {
	if r.untraced[key] {
		return nil
	}
	return faultTracing{r.recordingTracer.Begin(ctx, key, start).(tracing), r}
}

// faultsOf returns what the trace t was told of faults, in order.
func (r *faultRecordingTracer) faultsOf(t *recordedTrace) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.faults[t]
}

type faultTracing struct {
	tracing
	r *faultRecordingTracer
}

func (t faultTracing) InjectedDelay(at time.Time, d time.Duration) {
	t.record(fmt.Sprintf("delay %v at +%v", d, at.Sub(harnessStart)))
}

func (t faultTracing) InjectedError(at time.Time, err error) {
	t.record(fmt.Sprintf("error %q at +%v", err, at.Sub(harnessStart)))
}

func (t faultTracing) record(what string) {
	t.r.mu.Lock()
	t.r.faults[t.t] = append(t.r.faults[t.t], what)
	t.r.mu.Unlock()
}

// A FaultTrace is told of the delay and the error injected into its
// execution, when each begins, in every mode and isolation; the execution
// ends as a failure the fallback answered, as without a trace.
func TestFaultTraceIsToldOfInjectedFaults(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		tr := newFaultRecordingTracer()
		h.reg.SetTracer(tr)
		c := New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{
			Isolation: iso,
			Faults:    FaultConfig{Enabled: true, DelayPercentage: 100, Delay: 300 * time.Millisecond, ErrorPercentage: 100},
		})).WithFallback(fallbackName)
		call := goCall(func() (string, error) { return m.exec(context.Background(), c, 1) })
		waitFor(t, "the delay to begin", func() bool { return h.state("GetUser").faults[faultDelay].Load() == 1 })
		h.clock.Advance(300 * time.Millisecond)
		res := awaitCall(t, call)
		require.NoError(t, res.err)
		assert.Equal(t, "anonymous", res.v)
		h.completion()

		got := tr.next(t)
		assert.Equal(t, []string{"delay 300ms at +0s", `error "command: injected fault" at +300ms`}, tr.faultsOf(got))
		assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), eventNames(got.end.Events))
	})
}

// An ObservableCommand's trace is told of the error that stands in for
// its Observable, and of an error of the Config's own.
func TestFaultTraceOfAnObservableCommand(t *testing.T) {
	h := newHarness(t)
	tr := newFaultRecordingTracer()
	h.reg.SetTracer(tr)
	down := BadRequest(fmt.Errorf("no such user"))
	c := NewObservable("ListUsers", func(ctx context.Context, n int) observable.Observable[int] {
		return observable.Just(n, n+1)
	}, WithRegistry(h.reg), WithConfig(Config{Faults: FaultConfig{Enabled: true, ErrorPercentage: 100, Error: down}}))
	_, err := c.ToObservable(context.Background(), 3).ToSlice(context.Background())
	assert.ErrorIs(t, err, down)
	got := tr.next(t)
	assert.Equal(t, []string{`error "bad request: no such user" at +0s`}, tr.faultsOf(got))
	assert.Equal(t, evs("BAD_REQUEST"), eventNames(got.end.Events))
}

// A trace is told of its own execution's faults only: not of those of a
// command that its run calls and that is not traced, although run's
// context, which that command's run gets too, holds the trace. A run of a
// key without faults, or under a trace that is not a FaultTrace, gets a
// context with no FaultTrace in it.
func TestFaultTraceIsToldOfItsOwnFaultsOnly(t *testing.T) {
	h := newHarness(t)
	tr := newFaultRecordingTracer("GetAddress")
	h.reg.SetTracer(tr)
	getAddress := New("GetAddress", succeedRun, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Faults:    FaultConfig{Enabled: true, ErrorPercentage: 100},
	})).WithFallback(fallbackName)
	getUser := New("GetUser", func(ctx context.Context, id int) (string, error) {
		return getAddress.Execute(ctx, id)
	}, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Faults:    FaultConfig{Enabled: true, MarkedOnly: true},
	}))
	v, err := getUser.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, "anonymous", v, "GetAddress's fault was injected")
	got := tr.next(t)
	assert.Equal(t, "GetUser", got.key)
	assert.Empty(t, tr.faultsOf(got))

	var inRun any
	plain := New("Plain", func(ctx context.Context, id int) (string, error) {
		inRun = ctx.Value(faultTraceKey{})
		return "", nil
	}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation}))
	_, err = plain.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Nil(t, inRun, "a key without faults")

	h.reg.SetTracer(newRecordingTracer())
	inRun = "unset"
	faulty := New("Faulty", func(ctx context.Context, id int) (string, error) {
		inRun = ctx.Value(faultTraceKey{})
		return "", nil
	}, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation,
		Faults: FaultConfig{Enabled: true, MarkedOnly: true}}))
	_, err = faulty.Execute(context.Background(), 1)
	require.NoError(t, err)
	assert.Nil(t, inRun, "a trace that is not a FaultTrace")
}
