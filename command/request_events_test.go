package command

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// watchRequests subscribes to the request events of r until the test ends.
func watchRequests(t *testing.T, r *Registry) <-chan metricsstream.RequestEvents {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	got := make(chan metricsstream.RequestEvents, 16)
	r.Metrics().RequestEvents().SubscribeFunc(ctx, func(e metricsstream.RequestEvents) { got <- e }, nil, nil)
	require.True(t, r.Metrics().RequestEventsWatched())
	return got
}

// Hystrix writes a request's log to HystrixRequestEventsStream when its
// request context shuts down: here, when the context of WithRequestContext
// ends. The cache key and the collapser of each execution come along.
func TestRequestContextPublishesItsLogWhenItEnds(t *testing.T) {
	r, mc := newManualRegistry(t)
	got := watchRequests(t, r)
	getUser := New("GetUser", func(ctx context.Context, id int) (string, error) {
		mc.Advance(12 * time.Millisecond)
		return "user" + itoa(id), nil
	}, WithRegistry(r), WithConfig(Config{Isolation: SemaphoreIsolation})).WithCacheKey(itoa)
	failing := New("Failing", func(ctx context.Context, id int) (int, error) { return 0, errors.New("boom") },
		WithRegistry(r), WithConfig(Config{Isolation: SemaphoreIsolation}))
	b := &batches{}
	users := NewCollapser("Users", b.getUsers, WithRegistry(r))

	parent, end := context.WithCancel(context.Background())
	ctx := WithRequestContext(parent)
	for range 3 {
		v, err := getUser.Execute(ctx, 7)
		require.NoError(t, err)
		require.Equal(t, "user7", v)
	}
	_, err := failing.Execute(ctx, 1)
	require.Error(t, err)
	f1, f2 := users.Queue(ctx, 1), users.Queue(ctx, 2)
	mc.Advance(DefaultCollapserDelay)
	get(t, f1)
	get(t, f2)
	end()

	events := recv(t, got, "the request events")
	assert.Equal(t, RequestLogFrom(ctx).Executions(), []Execution(events), "the log as it was when the request ended")
	require.Len(t, events, 5)
	for _, e := range events[:3] {
		assert.Equal(t, "7", e.CacheKey, "the execution that ran and those the cache served")
	}
	batch := events[4]
	assert.Equal(t, "Users", batch.Collapser)
	assert.Empty(t, events[3].CacheKey+events[3].Collapser)

	js, err := json.Marshal(events)
	require.NoError(t, err)
	assert.JSONEq(t, `[
		{"name":"GetUser","events":["SUCCESS"],"latencies":[12],"cached":2},
		{"name":"Failing","events":["FAILURE","FALLBACK_MISSING"],"latencies":[0]},
		{"name":"`+batch.Command+`","events":["SUCCESS"],"latencies":[0],"collapsed":{"name":"Users","count":2}}
	]`, string(js))
}

// Nothing is armed for a request that nobody watches: a request context
// whose executions ran while the registry's request events had no
// subscriber publishes nothing when it ends. The first execution logged
// while somebody watches arms it.
func TestRequestContextPublishesOnlyWhileWatched(t *testing.T) {
	r, _ := newManualRegistry(t)
	c := New("Unwatched", func(ctx context.Context, id int) (int, error) { return id, nil },
		WithRegistry(r), WithConfig(Config{Isolation: SemaphoreIsolation}))
	parent, end := context.WithCancel(context.Background())
	defer end()
	ctx := WithRequestContext(parent)
	_, err := c.Execute(ctx, 1)
	require.NoError(t, err)
	rc := requestContextOf(ctx)
	assert.Empty(t, rc.streamTo, "no registry to publish to")

	got := watchRequests(t, r)
	_, err = c.Execute(ctx, 2)
	require.NoError(t, err)
	assert.Equal(t, []*metricsstream.Registry{r.Metrics()}, rc.streamTo)
	end()
	events := recv(t, got, "the request events")
	assert.Len(t, events, 2, "the whole log, the executions before the watch began too")
}

// A request that used the commands of two registries goes to the request
// events of both; a key whose log is off arms nothing.
func TestRequestContextPublishesToEveryRegistryItUsed(t *testing.T) {
	r1, _ := newManualRegistry(t)
	r2, _ := newManualRegistry(t)
	got1, got2 := watchRequests(t, r1), watchRequests(t, r2)
	sem := Config{Isolation: SemaphoreIsolation}
	one := New("One", func(ctx context.Context, id int) (int, error) { return id, nil }, WithRegistry(r1), WithConfig(sem))
	two := New("Two", func(ctx context.Context, id int) (int, error) { return id, nil }, WithRegistry(r2), WithConfig(sem))
	quiet := sem
	quiet.RequestLogDisabled = true
	unlogged := New("Unlogged", func(ctx context.Context, id int) (int, error) { return id, nil }, WithRegistry(r2), WithConfig(quiet))

	parent, end := context.WithCancel(context.Background())
	ctx := WithRequestContext(parent)
	_, err := unlogged.Execute(ctx, 0)
	require.NoError(t, err)
	assert.Empty(t, requestContextOf(ctx).streamTo, "a key whose log is off arms nothing")
	_, err = one.Execute(ctx, 1)
	require.NoError(t, err)
	_, err = two.Execute(ctx, 2)
	require.NoError(t, err)
	end()
	e1, e2 := recv(t, got1, "the first registry's request events"), recv(t, got2, "the second registry's request events")
	assert.Equal(t, e1, e2)
	assert.Equal(t, "One[SUCCESS][0ms], Two[SUCCESS][0ms]", e1.String())
}
