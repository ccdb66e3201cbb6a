package metricsstream

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// execution returns a RequestExecution of command with events, which ran
// for ms milliseconds (-1: it did not run).
func execution(command string, ms int, events ...EventType) RequestExecution {
	e := RequestExecution{Command: command, ExecutionLatency: time.Duration(ms) * time.Millisecond}
	if ms < 0 {
		e.ExecutionLatency = -1
	}
	for _, t := range events {
		e.Events[t]++
	}
	return e
}

// cached returns e with its cache key set.
func cached(e RequestExecution, cacheKey string) RequestExecution {
	e.CacheKey = cacheKey
	return e
}

// cacheHit returns an execution of command served from the request cache
// under cacheKey, with the events of the execution that ran.
func cacheHit(command, cacheKey string, served ...EventType) RequestExecution {
	return cached(execution(command, -1, append(served, ResponseFromCache)...), cacheKey)
}

func TestRequestEventsJSON(t *testing.T) {
	batch := execution("GetUsers", 9, Success, Collapsed, Collapsed, Collapsed)
	batch.Collapser = "UserCollapser"
	cases := []struct {
		name   string
		events RequestEvents
		want   string
	}{
		{"no executions", nil, `[]`},
		{"a success", RequestEvents{execution("Foo", 100, Success)},
			`[{"name":"Foo","events":["SUCCESS"],"latencies":[100]}]`},
		{"a failure and its fallback", RequestEvents{execution("Foo", 101, Failure, FallbackMissing, ExceptionThrown)},
			`[{"name":"Foo","events":["FAILURE","FALLBACK_MISSING"],"latencies":[101]}]`},
		{"a short circuit, which did not run", RequestEvents{execution("Foo", -1, ShortCircuited, FallbackSuccess)},
			`[{"name":"Foo","events":["SHORT_CIRCUITED","FALLBACK_SUCCESS"],"latencies":[-1]}]`},
		{"events in Hystrix's order, repeated ones counted",
			RequestEvents{execution("Foo", 100, FallbackSuccess, FallbackEmit, FallbackEmit, Failure, Emit, Emit, Emit)},
			`[{"name":"Foo","events":[{"name":"EMIT","count":3},"FAILURE",{"name":"FALLBACK_EMIT","count":2},"FALLBACK_SUCCESS"],"latencies":[100]}]`},
		{"the same key and events, one object",
			RequestEvents{execution("Foo", 23, Success), execution("Foo", 34, Success)},
			`[{"name":"Foo","events":["SUCCESS"],"latencies":[23,34]}]`},
		{"other events or keys, objects in the order they first ended",
			RequestEvents{execution("Foo", 10, Success), execution("Bar", 5, Success), execution("Foo", 67, Failure, FallbackSuccess), execution("Foo", 11, Success)},
			`[{"name":"Foo","events":["SUCCESS"],"latencies":[10,11]},{"name":"Bar","events":["SUCCESS"],"latencies":[5]},{"name":"Foo","events":["FAILURE","FALLBACK_SUCCESS"],"latencies":[67]}]`},
		{"cache hits counted on the execution that ran",
			RequestEvents{cached(execution("Foo", 23, Success), "A"), cacheHit("Foo", "A", Success), cacheHit("Foo", "A", Success)},
			`[{"name":"Foo","events":["SUCCESS"],"latencies":[23],"cached":2}]`},
		{"one object per cache key that served hits",
			RequestEvents{cached(execution("Foo", 23, Success), "A"), cacheHit("Foo", "A", Success),
				cached(execution("Foo", 67, Success), "B"), cacheHit("Foo", "B", Success), cached(execution("Foo", 5, Success), "C")},
			`[{"name":"Foo","events":["SUCCESS"],"latencies":[23],"cached":1},{"name":"Foo","events":["SUCCESS"],"latencies":[67],"cached":1},{"name":"Foo","events":["SUCCESS"],"latencies":[5]}]`},
		{"a hit goes to the latest execution that ran with its key before it",
			RequestEvents{cached(execution("Foo", 1, Success), "A"), cached(execution("Foo", 2, Failure, FallbackSuccess), "A"), cacheHit("Foo", "A", Failure, FallbackSuccess)},
			`[{"name":"Foo","events":["SUCCESS"],"latencies":[1]},{"name":"Foo","events":["FAILURE","FALLBACK_SUCCESS"],"latencies":[2],"cached":1}]`},
		{"a hit whose execution is not there is listed",
			RequestEvents{cacheHit("Foo", "A", Success), cached(execution("Bar", 3, Success), "A"), cacheHit("Foo", "A", Success)},
			`[{"name":"Foo","events":["SUCCESS","RESPONSE_FROM_CACHE"],"latencies":[-1,-1]},{"name":"Bar","events":["SUCCESS"],"latencies":[3]}]`},
		{"a caller that left before the response is a hit too",
			RequestEvents{cached(execution("Foo", 7, Success), "A"), cacheHit("Foo", "A", Cancelled)},
			`[{"name":"Foo","events":["SUCCESS"],"latencies":[7],"cached":1}]`},
		{"a batch names its collapser and its size", RequestEvents{batch},
			`[{"name":"GetUsers","events":["SUCCESS"],"latencies":[9],"collapsed":{"name":"UserCollapser","count":3}}]`},
		{"names are escaped", RequestEvents{execution(`Get "User"`, 1, Success)},
			`[{"name":"Get \"User\"","events":["SUCCESS"],"latencies":[1]}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.events)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(b))
		})
	}
}

func TestRequestEventsString(t *testing.T) {
	events := RequestEvents{
		execution("GetUser", 12, Success),
		execution("GetUser", -1, Success, ResponseFromCache),
		execution("GetUser", -1, Success, ResponseFromCache),
		execution("Stream", 100, Emit, Emit, Emit, Emit, Emit, Failure, FallbackEmit, FallbackEmit, FallbackEmit, FallbackEmit, FallbackEmit, FallbackEmit, FallbackFailure, ExceptionThrown),
		execution("Nothing", 3),
		execution("GetUser", 3, Success),
	}
	assert.Equal(t, "GetUser[SUCCESS][15ms]x2, GetUser[SUCCESS, RESPONSE_FROM_CACHE][0ms]x2, "+
		"Stream[EMITx5, FAILURE, FALLBACK_EMITx6, FALLBACK_FAILURE][100ms], Nothing[Executed][3ms]", events.String())
	assert.Equal(t, "GetUser[SUCCESS, RESPONSE_FROM_CACHE][0ms]", events[1].String())
	assert.Empty(t, RequestEvents(nil).String())
}

func TestRegistryRequestEventsStream(t *testing.T) {
	reg, _ := newStreamRegistry()
	reg.PublishRequestEvents(RequestEvents{execution("Unseen", 1, Success)}) // nobody subscribes: gone
	assert.False(t, reg.RequestEventsWatched())

	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan RequestEvents, 1)
	reg.RequestEvents().Subscribe(ctx, funcObserver[RequestEvents](func(e RequestEvents) { got <- e }))
	assert.True(t, reg.RequestEventsWatched())

	want := RequestEvents{execution("Seen", 2, Success)}
	reg.PublishRequestEvents(want)
	select {
	case e := <-got:
		assert.Equal(t, want, e)
	case <-time.After(failAfter):
		t.Fatal("the request was not delivered")
	}
	cancel()
	assert.Eventually(t, func() bool { return !reg.RequestEventsWatched() }, failAfter, time.Millisecond,
		"the subscription ends with its context")
}

func TestRegistryRequestEventsCountsDropsAndPanics(t *testing.T) {
	reg, _ := newStreamRegistry()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hold := make(chan struct{})
	o := &blockingObserver{hold: hold, err: make(chan error, 1)}
	reg.RequestEvents().Subscribe(ctx, o)
	for range 1 + fanoutBuffer + 7 {
		reg.PublishRequestEvents(RequestEvents{execution("R", 1, Success)})
	}
	// The subscriber may not have taken its first yet: 7 or 8 dropped.
	assert.Contains(t, []uint64{7, 8}, reg.DroppedRequestEvents())
	close(hold)
	select {
	case err := <-o.err:
		var pe *SubscriberPanicError
		assert.ErrorAs(t, err, &pe)
	case <-time.After(failAfter):
		t.Fatal("the panicking subscriber was not unsubscribed")
	}
	assert.Equal(t, uint64(1), reg.PanickedSubscribers())
	assert.False(t, reg.RequestEventsWatched())
}

// blockingObserver blocks on its first value until hold is closed, then
// panics.
type blockingObserver struct {
	hold chan struct{}
	err  chan error
}

func (o *blockingObserver) OnNext(RequestEvents) {
	<-o.hold
	panic("subscriber bug")
}
func (o *blockingObserver) OnError(err error) { o.err <- err }
func (o *blockingObserver) OnCompleted()      {}
