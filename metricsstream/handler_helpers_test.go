package metricsstream

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/stretchr/testify/require"
)

// failAfter bounds a wait for something a test has set in motion, so that a
// broken stream fails the test instead of hanging it. It is a deadline for
// failure, never a wait for time to pass.
const failAfter = 10 * time.Second

// commandStatus is a CommandStatusProvider that reports a fixed status.
type commandStatus CommandStatus

func (s commandStatus) CommandStatus() CommandStatus { return CommandStatus(s) }

// poolStatus is a PoolStatusProvider that reports a fixed status.
type poolStatus PoolStatus

func (s poolStatus) PoolStatus() PoolStatus { return PoolStatus(s) }

// streamServer serves h on a test server and reports when each request's
// handler returns.
type streamServer struct {
	*httptest.Server
	returned chan struct{} // one value per request served
}

func newStreamServer(t *testing.T, h http.Handler) *streamServer {
	t.Helper()
	s := &streamServer{returned: make(chan struct{}, 100)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { s.returned <- struct{}{} }()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// waitReturned waits until a request's handler has returned.
func (s *streamServer) waitReturned(t *testing.T) {
	t.Helper()
	select {
	case <-s.returned:
	case <-time.After(failAfter):
		t.Fatal("the stream handler did not return")
	}
}

// sseClient reads a stream as the Hystrix dashboard does.
type sseClient struct {
	resp   *http.Response
	r      *bufio.Reader
	cancel context.CancelFunc
}

// connect opens the stream at url and checks that it is one.
func connect(t *testing.T, url string) *sseClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	c := &sseClient{resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
	t.Cleanup(c.close)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return c
}

// close disconnects, as a browser tab that is closed.
func (c *sseClient) close() {
	c.cancel()
	c.resp.Body.Close()
}

// event reads the next event: its field name ("data" or "ping") and value.
func (c *sseClient) event() (field, value string, err error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return "", "", err
	}
	blank, err := c.r.ReadString('\n')
	if err != nil {
		return "", "", err
	}
	if blank != "\n" {
		return "", "", &streamError{"event not followed by a blank line: " + line + blank}
	}
	field, value, ok := strings.Cut(strings.TrimSuffix(line, "\n"), ": ")
	if !ok {
		return "", "", &streamError{"not an event: " + line}
	}
	return field, value, nil
}

type streamError struct{ msg string }

func (e *streamError) Error() string { return e.msg }

// frame reads the data events up to the next ping.
func (c *sseClient) frame(t *testing.T) []string {
	t.Helper()
	var data []string
	for {
		field, value, err := c.event()
		require.NoError(t, err, "reading the stream")
		switch field {
		case "ping":
			require.Empty(t, value, "a ping carries nothing")
			return data
		case "data":
			data = append(data, value)
		default:
			t.Fatalf("unexpected event %q: %q", field, value)
		}
	}
}

// object is one JSON object of the stream, with its keys in order.
type object struct {
	keys   []string
	values map[string]any
}

// parseObject parses a JSON object, keeping the order of its keys.
func parseObject(t *testing.T, data string) object {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok, "an object: %s", data)
	o := object{values: map[string]any{}}
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		var v any
		require.NoError(t, dec.Decode(&v))
		key := k.(string)
		require.NotContains(t, o.values, key, "key %q twice", key)
		o.keys = append(o.keys, key)
		o.values[key] = v
	}
	_, err = dec.Token()
	require.NoError(t, err)
	_, err = dec.Token()
	require.ErrorIs(t, err, io.EOF, "one object per event: %s", data)
	return o
}

// int reads an integer field; it fails on a number with a fraction.
func (o object) int(t *testing.T, key string) int64 {
	t.Helper()
	n, ok := o.values[key].(json.Number)
	require.True(t, ok, "%s is a number: %v", key, o.values[key])
	v, err := n.Int64()
	require.NoError(t, err, "%s is an integer", key)
	return v
}

// objectsOfFrame parses the objects of a frame.
func objectsOfFrame(t *testing.T, frame []string) []object {
	t.Helper()
	out := make([]object, len(frame))
	for i, d := range frame {
		out[i] = parseObject(t, d)
	}
	return out
}

// names lists the type and name of each object.
func names(objs []object) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.values["type"].(string) + " " + o.values["name"].(string)
	}
	return out
}

// serveOnce runs one request through h on a recorder, with a context that
// is already cancelled: a stream writes its first frame and returns.
func serveOnce(h http.Handler, method, target string) *httptest.ResponseRecorder {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequestWithContext(ctx, method, "/hystrix.stream", nil)
	req.URL.RawQuery = target
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// newStreamRegistry returns a registry on a manual clock reading t0.
func newStreamRegistry() (*Registry, *clock.Manual) {
	mc := clock.NewManual(t0)
	return NewRegistry(mc), mc
}

// recordEvents records one execution made of events, with latencies when
// it ran.
func recordEvents(m *CommandMetrics, execution, total time.Duration, events ...EventType) {
	c := Completion{CommandKey: m.Key(), ExecutionLatency: execution, TotalLatency: total, Executed: execution > 0}
	for _, e := range events {
		c.Events.Add(e, 1)
	}
	m.MarkCompletion(&c)
}
