package httpcommand

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// failAfter bounds, in real time, a wait for what should have happened
// already, so that a broken test fails instead of hanging.
const failAfter = 10 * time.Second

// readSignal is a transport whose responses' bodies tell read when they
// are first read.
type readSignal struct {
	base http.RoundTripper
	read chan struct{}
}

func (s *readSignal) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(req)
	if err == nil {
		resp.Body = &signalBody{ReadCloser: resp.Body, read: s.read}
	}
	return resp, err
}

type signalBody struct {
	io.ReadCloser
	read chan struct{}
	once atomic.Bool
}

func (b *signalBody) Read(p []byte) (int, error) {
	if b.once.CompareAndSwap(false, true) {
		b.read <- struct{}{}
	}
	return b.ReadCloser.Read(p)
}

// A failure's body is drained under the command's timeout: a host that
// sends a 503's headers and then stalls its body holds neither the caller
// nor the key's worker past the timeout.
func TestStalledFailureBodyEndsAtTheTimeout(t *testing.T) {
	for _, iso := range []command.Isolation{command.PoolIsolation, command.SemaphoreIsolation} {
		t.Run(iso.String(), func(t *testing.T) {
			signal := &readSignal{base: &http.Transport{}, read: make(chan struct{}, 1)}
			h := newHarness(t, WithBase(signal),
				WithConfig(func(string) command.Config {
					return command.Config{Timeout: 100 * time.Millisecond, Isolation: iso, MaxConcurrentRequests: 1}
				}),
				WithPoolConfig(func(string) command.PoolConfig { return command.PoolConfig{CoreSize: 1} }))
			release := make(chan struct{})
			defer close(release)
			srv := server(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/ok" {
					return
				}
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte("partial"))
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
				}
			})
			answered := make(chan error, 1)
			go func() {
				resp, err := h.get(t, srv.URL+"/stall")
				if resp != nil {
					resp.Body.Close()
				}
				answered <- err
			}()
			select {
			case <-signal.read: // the 503's body is being drained
			case <-time.After(failAfter):
				t.Fatal("the 503's body was not read")
			}
			h.clock.Advance(100 * time.Millisecond)
			select {
			case err := <-answered:
				assert.ErrorIs(t, err, command.ErrTimeout)
			case <-time.After(failAfter):
				t.Fatal("the caller waits past the command's timeout")
			}
			// The worker ends its run once the drain has seen the timeout.
			deadline := time.Now().Add(failAfter)
			for {
				resp, err := h.get(t, srv.URL+"/ok")
				if err == nil {
					readBody(t, resp)
					break
				}
				require.True(t, time.Now().Before(deadline), "the key's one worker, or permit, is still taken: %v", err)
				runtime.Gosched()
			}
		})
	}
}

// The body of a 101 Switching Protocols response is the connection both
// ways, and stays writable, as a reverse proxy of WebSockets needs.
func TestUpgradedBodyStaysWritable(t *testing.T) {
	h := newHarness(t)
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		_ = rw.Flush()
		line, _ := rw.ReadString('\n')
		_, _ = rw.WriteString(line)
		_ = rw.Flush()
	})
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "echo")
	resp, err := h.transport.RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusSwitchingProtocols, resp.StatusCode)
	conn, ok := resp.Body.(io.ReadWriteCloser)
	require.True(t, ok, "the body of a 101 is not writable: %T", resp.Body)
	_, err = io.WriteString(conn, "ping\n")
	require.NoError(t, err)
	echoed, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "ping\n", echoed)
}

// A request made by hand without a Header, which http.Transport takes,
// carries its mark for fault injection too, and its body is closed.
func TestMarkedRequestWithoutAHeader(t *testing.T) {
	h := newHarness(t, WithFaultHeader(FaultHeader))
	var got atomic.Value
	srv := server(t, func(w http.ResponseWriter, r *http.Request) { got.Store(r.Header.Get(FaultHeader)) })
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	b := &closeCounter{Reader: strings.NewReader("data")}
	req := (&http.Request{Method: http.MethodPut, URL: u, Host: u.Host, Body: b, ContentLength: 4}).
		WithContext(command.WithFaultInjection(context.Background()))
	resp, err := h.transport.RoundTrip(req)
	require.NoError(t, err)
	readBody(t, resp)
	assert.Equal(t, int64(1), b.closed.Load(), "the request's body is closed")
	assert.Equal(t, "*", got.Load())
}

// A hedge's 404 is the caller's answer, as the server's 4xx always is:
// the request that hangs is cancelled rather than waited for.
func TestHedgedNotFoundReachesTheCaller(t *testing.T) {
	h := newHarness(t, WithConfig(func(string) command.Config {
		return command.Config{Timeout: -1, Hedge: command.HedgeConfig{MaxHedges: 1, Delay: 10 * time.Millisecond}}
	}))
	var requests atomic.Int32
	first := make(chan struct{})
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			close(first)
			<-r.Context().Done()
			return
		}
		http.NotFound(w, r)
	})
	done := h.getAside(t, srv.URL)
	<-first
	h.clock.Advance(10 * time.Millisecond)
	select {
	case r := <-done:
		require.NoError(t, r.err)
		assert.Equal(t, http.StatusNotFound, r.resp.StatusCode)
		readBody(t, r.resp)
	case <-time.After(failAfter):
		t.Fatal("the 404 did not reach the caller")
	}
	ev := h.events(hostOf(srv))
	assert.Equal(t, int64(1), ev[metricsstream.BadRequest])
	assert.Equal(t, int64(1), ev[metricsstream.Cancelled], "the request that hung")
}

// nilBodyBase answers every request with code and a nil Body, as many
// RoundTrippers in the wild do for an empty body (http.Client fills in an
// empty one for them: golang.org/issue/38095).
type nilBodyBase int

func (c nilBodyBase) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	return &http.Response{StatusCode: int(c), Status: http.StatusText(int(c)), Header: http.Header{}, Request: req}, nil
}

// A base whose response has a nil Body, which http.Client accepts as an
// empty one, must not make the caller's Read or Close panic, nor turn a
// 503 into a panic of the run's.
func TestNilResponseBodyFromTheBase(t *testing.T) {
	for _, code := range []int{http.StatusOK, http.StatusNotFound} {
		h := newHarness(t, WithBase(nilBodyBase(code)))
		resp, err := h.get(t, "http://downstream.test/")
		require.NoError(t, err)
		assert.Equal(t, code, resp.StatusCode)
		require.NotPanics(t, func() { assert.Equal(t, "", readBody(t, resp)) }, "status %d", code)
	}

	h := newHarness(t, WithBase(nilBodyBase(http.StatusServiceUnavailable)))
	_, err := h.get(t, "http://downstream.test/")
	var s *StatusError
	require.ErrorAs(t, err, &s, "a 503 is the server's answer, not a panic: %v", err)
	assert.Equal(t, http.StatusServiceUnavailable, s.StatusCode)
	var ce *command.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, command.CommandFailure, ce.Failure)
}

// A request that the base transport refuses to send because a header or
// trailer field or its method is malformed (a value with a newline, from
// a caller's input, say) is the caller's mistake: a bad request, which
// neither counts against the host's health nor reaches the fallback.
// Counted as a failure, a caller repeating it would open the host's
// circuit for every other caller.
func TestMalformedRequestIsABadRequest(t *testing.T) {
	for name, spoil := range map[string]func(*http.Request){
		"header": func(req *http.Request) { req.Header.Set("X-User", "a\r\nInjected: yes") },
		"trailer": func(req *http.Request) {
			req.Trailer = http.Header{"X-Sum": {"a\r\nInjected: yes"}}
		},
		"method": func(req *http.Request) { req.Method = "GET /evil" },
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, WithConfig(tripFast), WithFallback(func(*http.Request, error) (*http.Response, error) {
				t.Error("a malformed request reached the fallback")
				return nil, errors.New("no")
			}))
			srv := server(t, status(http.StatusOK))
			for range 10 {
				req, err := http.NewRequest(http.MethodPut, srv.URL, strings.NewReader("body"))
				require.NoError(t, err)
				spoil(req)
				_, err = h.transport.RoundTrip(req)
				require.Error(t, err)
				assert.True(t, command.IsBadRequest(err), "%v", err)
			}
			h.clock.Advance(time.Second)
			assert.False(t, h.registry.Breaker(hostOf(srv)).IsOpen(), "the host's circuit stays closed")
			ev := h.events(hostOf(srv))
			assert.Equal(t, int64(10), ev[metricsstream.BadRequest])
			assert.Zero(t, ev[metricsstream.Failure])

			resp, err := h.get(t, srv.URL)
			require.NoError(t, err, "a good request still reaches the host")
			readBody(t, resp)
		})
	}
}
