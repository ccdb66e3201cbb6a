package command

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// execOf returns a logged execution of key with events and latency.
func execOf(key string, latency time.Duration, events ...metricsstream.EventType) Execution {
	e := Execution{Command: key, ExecutionLatency: latency}
	for _, t := range events {
		e.Events.Add(t, 1)
	}
	return e
}

func TestRequestLogString(t *testing.T) {
	S, RFC := metricsstream.Success, metricsstream.ResponseFromCache
	cases := []struct {
		name       string
		executions []Execution
		want       string
	}{
		{"empty", nil, ""},
		{"one", []Execution{execOf("TestCommand", time.Millisecond, S)}, "TestCommand[SUCCESS][1ms]"},
		{"aggregated cache hits",
			[]Execution{
				execOf("GetUser", 12*time.Millisecond, S),
				execOf("GetUser", -1, S, RFC),
				execOf("GetUser", -1, S, RFC),
				execOf("GetOrders", time.Second, metricsstream.Timeout, metricsstream.FallbackSuccess),
			},
			"GetUser[SUCCESS][12ms], GetUser[SUCCESS, RESPONSE_FROM_CACHE][0ms]x2, GetOrders[TIMEOUT, FALLBACK_SUCCESS][1000ms]"},
		{"latencies summed in first-seen order",
			[]Execution{
				execOf("B", 3*time.Millisecond, S),
				execOf("A", 1*time.Millisecond, metricsstream.Failure, metricsstream.FallbackFailure),
				execOf("B", 5900*time.Microsecond, S),
			},
			"B[SUCCESS][8ms]x2, A[FAILURE, FALLBACK_FAILURE][1ms]"},
		{"events in Hystrix's order, whatever the order they happened in",
			[]Execution{execOf("C", 0, metricsstream.FallbackMissing, metricsstream.ShortCircuited)},
			"C[SHORT_CIRCUITED, FALLBACK_MISSING][0ms]"},
		{"no events", []Execution{{Command: "Quiet"}}, "Quiet[Executed][0ms]"},
		{"collapsed counts are not shown",
			[]Execution{func() Execution {
				e := execOf("GetUserBatch", 2*time.Millisecond, S)
				e.Events.Add(metricsstream.Collapsed, 4)
				return e
			}()},
			"GetUserBatch[SUCCESS, COLLAPSED][2ms]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var l RequestLog
			for _, e := range tc.executions {
				l.add(e)
			}
			assert.Equal(t, tc.want, l.String())
		})
	}
}

func TestRequestLogEmitCounts(t *testing.T) {
	e := Execution{Command: "TestCommand", ExecutionLatency: 100 * time.Millisecond}
	e.Events.Add(metricsstream.Emit, 5)
	e.Events.Add(metricsstream.Failure, 1)
	e.Events.Add(metricsstream.FallbackEmit, 6)
	e.Events.Add(metricsstream.FallbackFailure, 1)
	assert.Equal(t, "TestCommand[EMITx5, FAILURE, FALLBACK_EMITx6, FALLBACK_FAILURE][100ms]", e.String())
	one := Execution{Command: "One"}
	one.Events.Add(metricsstream.Emit, 1)
	one.Events.Add(metricsstream.Success, 1)
	assert.Equal(t, "One[EMIT, SUCCESS][0ms]", one.String())
}

func TestRequestLogCapacity(t *testing.T) {
	var l RequestLog
	for range RequestLogCapacity + 5 {
		l.add(execOf("Busy", time.Millisecond, metricsstream.Success))
	}
	assert.Equal(t, RequestLogCapacity, l.Len())
	assert.Equal(t, 5, l.Dropped())
	assert.Len(t, l.Executions(), RequestLogCapacity)
	assert.Equal(t, "Busy[SUCCESS][1000ms]x1000", l.String())
}

func TestRequestLogNil(t *testing.T) {
	var l *RequestLog
	assert.Zero(t, l.Len())
	assert.Zero(t, l.Dropped())
	assert.Nil(t, l.Executions())
	assert.Equal(t, "", l.String())
	assert.Nil(t, RequestLogFrom(context.Background()))
}

// Every kind of execution with a request context is logged, with its
// events and the latency of its user code.
func TestRequestLogRecordsExecutions(t *testing.T) {
	r, mc := newManualRegistry(t)
	getUser := New("GetUser", func(ctx context.Context, id int) (string, error) {
		mc.Advance(12 * time.Millisecond)
		return "user", nil
	}, WithRegistry(r))
	started := make(chan struct{})
	getOrders := New("GetOrders", func(ctx context.Context, id int) ([]int, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}, WithRegistry(r)).WithFallback(func(ctx context.Context, id int, err error) ([]int, error) { return nil, nil })
	stream := NewObservable("Stream", func(ctx context.Context, n int) observable.Observable[int] {
		return observable.Just(1, 2)
	}, WithRegistry(r))
	failing := New("Failing", func(ctx context.Context, id int) (int, error) { return 0, errors.New("boom") },
		WithRegistry(r), WithConfig(Config{Isolation: SemaphoreIsolation}))
	ctx := WithRequestContext(context.Background())

	_, err := getUser.Execute(ctx, 1)
	require.NoError(t, err)
	_, err = getUser.ToObservable(ctx, 1).Last(ctx)
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = getOrders.Execute(ctx, 1)
	}()
	<-started
	mc.Advance(time.Second) // the timeout
	<-done
	_, err = stream.Execute(ctx, 2)
	require.NoError(t, err)
	_, err = failing.Queue(ctx, 1).Get(ctx)
	require.Error(t, err)

	assert.Equal(t, "GetUser[SUCCESS][24ms]x2, GetOrders[TIMEOUT, FALLBACK_SUCCESS][1000ms], Stream[EMITx2, SUCCESS][0ms], Failing[FAILURE, FALLBACK_MISSING][0ms]",
		RequestLogFrom(ctx).String())
	executions := RequestLogFrom(ctx).Executions()
	require.Len(t, executions, 5)
	assert.Equal(t, 12*time.Millisecond, executions[0].ExecutionLatency)
	assert.Equal(t, "GetUser[SUCCESS][12ms]", executions[0].String())
}

// A short-circuited execution did not run: its latency is -1.
func TestRequestLogShortCircuit(t *testing.T) {
	r, _ := newManualRegistry(t)
	c := New("Open", func(ctx context.Context, id int) (int, error) { return id, nil },
		WithRegistry(r), WithConfig(Config{Breaker: breakerForcedOpen}))
	ctx := WithRequestContext(context.Background())
	_, err := c.Execute(ctx, 1)
	require.ErrorIs(t, err, ErrShortCircuited)
	executions := RequestLogFrom(ctx).Executions()
	require.Len(t, executions, 1)
	assert.Equal(t, time.Duration(-1), executions[0].ExecutionLatency)
	assert.Equal(t, "Open[SHORT_CIRCUITED, FALLBACK_MISSING][0ms]", executions[0].String())
}

// Config.RequestLogDisabled keeps a key out of the log, live.
func TestRequestLogDisabled(t *testing.T) {
	r, _ := newManualRegistry(t)
	quiet := New("Quiet", func(ctx context.Context, id int) (int, error) { return id, nil },
		WithRegistry(r), WithConfig(Config{RequestLogDisabled: true}))
	loud := New("Loud", func(ctx context.Context, id int) (int, error) { return id, nil }, WithRegistry(r))
	ctx := WithRequestContext(context.Background())
	_, _ = quiet.Execute(ctx, 1)
	_, _ = quiet.ToObservable(ctx, 1).Last(ctx)
	_, _ = loud.Execute(ctx, 1)
	assert.Equal(t, []string{"Loud[SUCCESS]"}, displays(RequestLogFrom(ctx)))

	require.NoError(t, r.Configure("Quiet", Config{}))
	_, _ = quiet.Execute(ctx, 1)
	assert.Equal(t, []string{"Loud[SUCCESS]", "Quiet[SUCCESS]"}, displays(RequestLogFrom(ctx)))
}

// Executions logged from many goroutines at once are all kept.
func TestRequestLogConcurrent(t *testing.T) {
	r, _ := newManualRegistry(t)
	c := New("Concurrent", func(ctx context.Context, id int) (int, error) { return id, nil },
		WithRegistry(r), WithConfig(Config{Isolation: SemaphoreIsolation, MaxConcurrentRequests: 100}))
	ctx := WithRequestContext(context.Background())
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			_, err := c.Execute(ctx, i)
			assert.NoError(t, err)
			_ = RequestLogFrom(ctx).String()
		})
	}
	wg.Wait()
	assert.Equal(t, "Concurrent[SUCCESS][0ms]x50", RequestLogFrom(ctx).String())
}
