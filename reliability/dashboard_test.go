package reliability

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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// streamReader reads the Hystrix dashboard stream as the dashboard does.
type streamReader struct {
	body *bufio.Reader
}

// nextCommands reads the events up to the next ping and returns the
// HystrixCommand objects of that frame by name.
func (r *streamReader) nextCommands() (map[string]map[string]any, error) {
	commands := map[string]map[string]any{}
	for {
		line, err := r.body.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
		case strings.HasPrefix(line, "ping:"):
			return commands, nil
		case strings.HasPrefix(line, "data: "):
			var obj map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &obj); err != nil {
				return nil, err
			}
			if obj["type"] == "HystrixCommand" {
				commands[obj["name"].(string)] = obj
			}
		default:
			return nil, &json.UnsupportedValueError{Str: line}
		}
	}
}

// waitForFrame reads frames until one satisfies ok.
func (r *streamReader) waitForFrame(t *testing.T, what string, ok func(map[string]map[string]any) bool) map[string]map[string]any {
	t.Helper()
	for {
		commands, err := r.nextCommands()
		require.NoError(t, err, "reading the stream while waiting for %s", what)
		if ok(commands) {
			return commands
		}
	}
}

func breakerOpen(commands map[string]map[string]any, name string) bool {
	return commands[name] != nil && commands[name]["isCircuitBreakerOpen"] == true
}

// TestDashboardStreamShowsTheFault reads the Hystrix dashboard stream of
// the fault tests' registry over loopback, at the cadence ?delay= asks
// for, while a downstream hangs and recovers: the stream shows its circuit
// open and the healthy one's closed, then both closed; a bad delay is
// refused over the wire; and the stream ends when the dashboard leaves.
func TestDashboardStreamShowsTheFault(t *testing.T) {
	s := newFaultScene(t, command.PoolIsolation, true)
	handler := metricsstream.Handler(metricsstream.WithRegistry(s.reg.Metrics()))
	returned := make(chan struct{}, 2)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { returned <- struct{}{} }()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(server.Close)

	resp, err := http.Get(server.URL + "/hystrix.stream?delay=0")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), "delay", "the refusal names the parameter")
	<-returned

	ctx, cancel := context.WithTimeout(context.Background(), stateDeadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, server.URL+"/hystrix.stream?delay=20", nil)
	require.NoError(t, err)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	stream := &streamReader{body: bufio.NewReader(resp.Body)}

	s.faulty.srv.set(hang)
	var during callLog
	l := s.start(&during)
	open := stream.waitForFrame(t, "the faulty circuit open", func(c map[string]map[string]any) bool {
		return breakerOpen(c, "faulty")
	})
	require.NotNil(t, open["healthy"], "the frame shows the healthy circuit")
	assert.False(t, breakerOpen(open, "healthy"), "the healthy circuit stays closed")
	assert.Equal(t, "downstreams", open["faulty"]["group"])

	s.faulty.srv.set(healthy)
	closed := stream.waitForFrame(t, "the faulty circuit closed again", func(c map[string]map[string]any) bool {
		return c["faulty"] != nil && !breakerOpen(c, "faulty")
	})
	require.NotNil(t, closed["healthy"], "the frame shows the healthy circuit")
	assert.False(t, breakerOpen(closed, "healthy"), "both circuits closed")
	l.halt()
	assert.Empty(t, during.bad, "healthy calls during the fault")

	cancel()
	resp.Body.Close()
	select {
	case <-returned:
	case <-time.After(stateDeadline):
		t.Fatal("the stream went on after the dashboard left")
	}
}
