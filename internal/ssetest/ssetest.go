// Package ssetest serves a fake Hystrix metrics stream, for the tests of
// what reads one (the dashboard's page, a Turbine): the headers of
// Hystrix's HystrixMetricsStreamServlet, a "ping: " keep-alive, and then,
// for each frame the test hands to Send, its events and a keep-alive.
// The test decides what the stream says and when; nothing is timed.
package ssetest

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
)

// Stream is a fake Hystrix metrics stream; serve it with an
// httptest.Server. Close it before the server closes, which waits for
// the connections it serves.
type Stream struct {
	frames   chan [][]byte // the events of one frame, handed to a connection
	hangUp   chan struct{} // ends the connection that receives it
	stop     chan struct{} // closed to end every connection
	stopOnce sync.Once

	connections atomic.Int32 // connections served
	serving     atomic.Int32 // connections being served now
}

// NewStream returns a Stream with no connection yet.
func NewStream() *Stream {
	return &Stream{frames: make(chan [][]byte), hangUp: make(chan struct{}), stop: make(chan struct{})}
}

// Data returns data as one server-sent event, as the stream writes
// each object: "data: {json}", and a blank line.
func Data(data string) []byte { return []byte("data: " + data + "\n\n") }

const ping = "ping: \n\n"

// ServeHTTP serves one connection of the stream until the client leaves,
// HangUp ends it or Close ends them all.
func (s *Stream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.connections.Add(1)
	s.serving.Add(1)
	defer s.serving.Add(-1)
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream;charset=UTF-8")
	h.Set("Cache-Control", "no-cache, no-store, max-age=0, must-revalidate")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write([]byte(ping)); err != nil {
		return
	}
	flusher.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.stop:
			return
		case <-s.hangUp:
			return
		case events := <-s.frames:
			for _, e := range events {
				if _, err := w.Write(e); err != nil {
					return
				}
			}
			if _, err := w.Write([]byte(ping)); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

// Send hands the events of one frame to a connection being served,
// waiting for one; it gives up when ctx ends.
func (s *Stream) Send(ctx context.Context, events ...[]byte) error {
	select {
	case s.frames <- events:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// HangUp ends a connection being served, waiting for one; it gives up
// when ctx ends.
func (s *Stream) HangUp(ctx context.Context) error {
	select {
	case s.hangUp <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close ends every connection, now and later. It may be called more
// than once.
func (s *Stream) Close() { s.stopOnce.Do(func() { close(s.stop) }) }

// Connections returns how many connections the stream has served.
func (s *Stream) Connections() int32 { return s.connections.Load() }

// Serving returns how many connections it is serving now.
func (s *Stream) Serving() int32 { return s.serving.Load() }
