package metricsstream

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRequestEventsHandlerWritesEachRequestAsItEnds(t *testing.T) {
	reg, mc := newStreamRegistry()
	srv := newStreamServer(t, RequestEventsHandler(WithRegistry(reg)))
	c := connect(t, srv.URL)
	assert.Equal(t, streamContentType, c.resp.Header.Get("Content-Type"))
	assert.Empty(t, c.frame(t), "a ping at once, and no request has ended")
	require.True(t, reg.RequestEventsWatched(), "the stream subscribes before its first ping")

	// Written as the requests end, not at the next tick: the clock does
	// not move.
	reg.PublishRequestEvents(RequestEvents{execution("GetUser", 12, Success), execution("GetUser", 3, Success)})
	reg.PublishRequestEvents(nil) // a request without executions writes nothing
	reg.PublishRequestEvents(RequestEvents{execution("GetOrders", -1, ShortCircuited, FallbackSuccess)})
	var data []string
	for len(data) < 2 {
		data = append(data, c.frame(t)...)
	}
	assert.Equal(t, []string{
		`[{"name":"GetUser","events":["SUCCESS"],"latencies":[12,3]}]`,
		`[{"name":"GetOrders","events":["SHORT_CIRCUITED","FALLBACK_SUCCESS"],"latencies":[-1]}]`,
	}, data)

	// While no request ends, a ping every interval of the registry's clock.
	mc.Advance(DefaultStreamInterval)
	assert.Empty(t, c.frame(t))

	c.close()
	srv.waitReturned(t)
	assert.Eventually(t, func() bool { return !reg.RequestEventsWatched() }, failAfter, time.Millisecond,
		"the stream unsubscribes when its client leaves")
}

func TestRequestEventsHandlerSharesTheTransport(t *testing.T) {
	reg, _ := newStreamRegistry()
	h := RequestEventsHandler(WithRegistry(reg), WithMaxConnections(1))
	srv := newStreamServer(t, h)
	c := connect(t, srv.URL)
	c.frame(t)
	resp := serveOnce(h, "GET", "")
	assert.Equal(t, 503, resp.Code)
	assert.Equal(t, "MaxConcurrentConnections reached: 1\n", resp.Body.String())
	assert.Equal(t, 400, serveOnce(h, "GET", "delay=0").Code)
	assert.Equal(t, 405, serveOnce(h, "POST", "").Code)
	assert.PanicsWithValue(t, "metricsstream: RequestEventsHandler: option 0 is nil", func() { RequestEventsHandler(nil) })
}
