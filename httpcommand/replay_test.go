package httpcommand

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/observable"
)

// bodies is a server that records the body of each request it gets and
// answers 503 to the first, 200 to the others.
type bodies struct {
	mu  sync.Mutex
	got []string
}

func (b *bodies) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	b.got = append(b.got, string(body))
	n := len(b.got)
	b.mu.Unlock()
	if n == 1 {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (b *bodies) received() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.got...)
}

// retrying is a key config that retries twice after 10 ms, with no
// timeout for the clock that do moves to reach.
func retrying(string) command.Config {
	return command.Config{Timeout: -1, Retry: command.RetryConfig{
		MaxAttempts: 3,
		Backoff:     observable.Backoff{Initial: 10 * time.Millisecond, Jitter: observable.NoJitter},
	}}
}

// answer is what a request sent aside got.
type answer struct {
	resp *http.Response
	err  error
}

// doAside sends req with the harness's client on a goroutine of its own;
// its answer comes on the channel.
func (h *harness) doAside(req *http.Request) <-chan answer {
	done := make(chan answer, 1)
	go func() {
		resp, err := h.client.Do(req)
		done <- answer{resp, err}
	}()
	return done
}

// getAside is doAside of a GET of url.
func (h *harness) getAside(t *testing.T, url string) <-chan answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	return h.doAside(req)
}

// do sends req, moving the clock a millisecond at a time until it is
// answered (a retry waits for its backoff on the clock), and returns the
// response's status, or the error.
func (h *harness) do(t *testing.T, req *http.Request) (int, error) {
	t.Helper()
	done := h.doAside(req)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case r := <-done:
			if r.err != nil {
				return 0, r.err
			}
			readBody(t, r.resp)
			return r.resp.StatusCode, nil
		case <-time.After(time.Millisecond):
			h.clock.Advance(time.Millisecond)
		}
	}
	t.Fatal("the request was not answered")
	return 0, nil
}

// A request that may be sent again is, by a key that retries, each time
// with its whole body.
func TestReplayableRequestIsRetriedWithItsBody(t *testing.T) {
	for _, tc := range []struct {
		name, method string
		header       string
	}{
		{"PUT", http.MethodPut, ""},
		{"POST with an Idempotency-Key", http.MethodPost, "Idempotency-Key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, WithConfig(retrying))
			b := &bodies{}
			srv := server(t, b.serve)
			req, err := http.NewRequest(tc.method, srv.URL, strings.NewReader("hello"))
			require.NoError(t, err)
			if tc.header != "" {
				req.Header.Set(tc.header, "order-42")
			}
			code, err := h.do(t, req)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, code)
			assert.Equal(t, []string{"hello", "hello"}, b.received(), "the retry sent the whole body again")
		})
	}
}

// A request that is not idempotent, or whose body cannot be made again,
// is sent once by a key that retries: its failure is the answer.
func TestOtherRequestsAreSentOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		method string
		body   io.Reader
	}{
		{"POST", http.MethodPost, strings.NewReader("hello")},
		{"PATCH", http.MethodPatch, strings.NewReader("hello")},
		{"PUT of a body without GetBody", http.MethodPut, io.NopCloser(strings.NewReader("hello"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, WithConfig(retrying))
			b := &bodies{}
			srv := server(t, b.serve)
			req, err := http.NewRequest(tc.method, srv.URL, tc.body)
			require.NoError(t, err)
			_, err = h.do(t, req)
			var status *StatusError
			require.ErrorAs(t, err, &status)
			assert.Equal(t, http.StatusServiceUnavailable, status.StatusCode)
			assert.Equal(t, []string{"hello"}, b.received(), "sent once")
		})
	}
}

// A GET that has not been answered after the hedge's delay is sent again
// beside it; the first answer wins, and the other request is cancelled.
func TestHedgedRequestWinsAndTheOtherIsCancelled(t *testing.T) {
	h := newHarness(t, WithConfig(func(string) command.Config {
		return command.Config{Hedge: command.HedgeConfig{MaxHedges: 1, Delay: 10 * time.Millisecond}}
	}))
	first := make(chan struct{})
	firstLeft := make(chan struct{})
	var mu sync.Mutex
	n := 0
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mine := n
		mu.Unlock()
		if mine == 1 {
			close(first)
			<-r.Context().Done() // hangs until the hedge wins
			close(firstLeft)
			return
		}
		_, _ = io.WriteString(w, "from the hedge")
	})
	done := h.getAside(t, srv.URL)
	<-first
	h.clock.Advance(10 * time.Millisecond)
	r := <-done
	require.NoError(t, r.err)
	assert.Equal(t, "from the hedge", readBody(t, r.resp))
	select {
	case <-firstLeft:
	case <-time.After(10 * time.Second):
		t.Fatal("the first request was not cancelled")
	}
}
