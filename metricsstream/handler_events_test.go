package metricsstream

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// sourceFunc is an EventSource of a function.
type sourceFunc func(dst []byte, now time.Time) []byte

func (f sourceFunc) AppendEvents(dst []byte, now time.Time) []byte { return f(dst, now) }

func TestEventsHandlerStreamsTheSourcesEventsOnItsClock(t *testing.T) {
	mc := clock.NewManual(t0)
	frames := 0
	source := sourceFunc(func(dst []byte, now time.Time) []byte {
		frames++
		return fmt.Appendf(dst, "data: {\"type\":\"Sum\",\"name\":\"n\",\"frame\":%d,\"currentTime\":%d}\n\n", frames, now.UnixMilli())
	})
	srv := newStreamServer(t, EventsHandler(source, WithClock(mc), WithInterval(time.Second)))
	c := connect(t, srv.URL)
	assert.Equal(t, "text/event-stream;charset=UTF-8", c.resp.Header.Get("Content-Type"), "Hystrix's transport")

	first := objectsOfFrame(t, c.frame(t))
	assert.Equal(t, []string{"Sum n"}, names(first), "a frame at once")
	assert.Equal(t, t0.UnixMilli(), first[0].int(t, "currentTime"))

	mc.Advance(time.Second)
	second := objectsOfFrame(t, c.frame(t))
	assert.Equal(t, int64(2), second[0].int(t, "frame"))
	assert.Equal(t, t0.Add(time.Second).UnixMilli(), second[0].int(t, "currentTime"), "the frame's time is WithClock's")
}
