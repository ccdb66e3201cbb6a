package hystrixprops

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/clock"
)

// propertiesServer serves a body of properties with an ETag of its
// version, answering 304 to a GET that has it, or fails with a status.
type propertiesServer struct {
	mu          sync.Mutex
	body        string
	version     string
	status      int      // not 0: the answer to every GET
	conditional []string // the If-None-Match of each GET
}

func (p *propertiesServer) set(body, version string, status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.body, p.version, p.status = body, version, status
}

func (p *propertiesServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conditional = append(p.conditional, r.Header.Get("If-None-Match"))
	switch {
	case p.status != 0:
		w.WriteHeader(p.status)
	case r.Header.Get("If-None-Match") == p.version:
		w.WriteHeader(http.StatusNotModified)
	default:
		w.Header().Set("ETag", p.version)
		_, _ = io.WriteString(w, p.body)
	}
}

// pollServed starts a propertiesServer that serves a threshold of 25 as
// "v1", and a poller of s's PollURL of its path every minute of mc.
func pollServed(t *testing.T, mc *clock.Manual, s *Source, path string) (*propertiesServer, *httptest.Server, *poller) {
	server := &propertiesServer{}
	server.set("hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage=25\n", `"v1"`, 0)
	srv := httptest.NewServer(server)
	t.Cleanup(srv.Close)
	p := startPoller(t, mc, func(ctx context.Context, report func(error)) error {
		return s.PollURL(ctx, srv.Client(), srv.URL+path, time.Minute, report)
	})
	return server, srv, p
}

// PollURL reads the properties at once and again every interval, with a
// conditional GET; it puts them in force when they changed, and reports
// a GET or a body that fails once, keeping the properties before.
func TestPollURLFollowsTheServer(t *testing.T) {
	mc, s, threshold := polledGetUser(t)
	server, srv, p := pollServed(t, mc, s, "/hystrix.properties")
	poll, reported := p.next, p.reported
	poll() // the first read is at once, before the timer is armed
	assert.Equal(t, 25, threshold())

	server.set("hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage=30\n", `"v2"`, 0)
	poll()
	assert.Equal(t, 30, threshold())

	server.set("hystrix.command.GetUser.circuitBreaker.errorThresholdPercent=35\n", `"v3"`, 0)
	poll()
	poll()
	assert.Equal(t, 30, threshold(), "the properties before stay in force")
	require.Len(t, reported(), 1, "reported once: %v", reported())
	assert.Contains(t, reported()[0], "/hystrix.properties: hystrixprops: bad property hystrix.command.GetUser.circuitBreaker.errorThresholdPercent: no such property")

	server.set("", "", http.StatusServiceUnavailable)
	poll()
	poll()
	require.Len(t, reported(), 2, "reported once more: %v", reported())
	assert.Contains(t, reported()[1], "/hystrix.properties: the server answered 503 Service Unavailable; the properties before stay in force")

	server.set("hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage=40\n", `"v4"`, 0)
	poll()
	assert.Equal(t, 40, threshold(), "the server is back")

	assert.ErrorIs(t, p.stop(), context.Canceled)
	server.mu.Lock()
	defer server.mu.Unlock()
	assert.Equal(t, []string{"", `"v1"`, `"v1"`, `"v2"`, `"v3"`, `"v3"`, `"v3"`, `"v3"`}, server.conditional[:8],
		"each GET sends the ETag of the answer before")
	assert.Len(t, reported(), 2)
	assert.EqualError(t, s.PollURL(context.Background(), nil, srv.URL, 0, nil), "hystrixprops: PollURL: interval 0s is not positive")
	assert.ErrorContains(t, s.PollURL(context.Background(), nil, "://bad", time.Second, nil), "hystrixprops: PollURL: ")
}

// A body that is the same as the one put in force before is not put in
// force again, though a GET failed in between: a server without
// validators answering the same properties after a blip does not undo
// what was set meanwhile.
func TestPollURLDoesNotPutTheSameBodyInForceAgainAfterAFailedGET(t *testing.T) {
	mc, s, threshold := polledGetUser(t)
	var (
		mu   sync.Mutex
		down bool
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if down {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage=25\n") // no ETag, no Last-Modified
	}))
	defer srv.Close()
	setDown := func(d bool) { mu.Lock(); down = d; mu.Unlock() }

	p := startPoller(t, mc, func(ctx context.Context, report func(error)) error {
		return s.PollURL(ctx, srv.Client(), srv.URL, time.Minute, report)
	})
	p.next()
	assert.Equal(t, 25, threshold())
	require.NoError(t, s.Set(mustFromMap(t, map[string]string{"hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage": "60"})))
	p.next()
	assert.Equal(t, 60, threshold(), "the same body is not put in force again")

	setDown(true)
	p.next()
	setDown(false)
	p.next()
	assert.Equal(t, 60, threshold(), "nor after a GET that failed")
	assert.Len(t, p.reported(), 1)
	assert.ErrorIs(t, p.stop(), context.Canceled)
}

// A 304 after a body that was refused says the refused body is still the
// server's: the refusal stands, and is not reported again when the same
// body comes back without its validator.
func TestPollURLKeepsARefusalThroughNotModified(t *testing.T) {
	mc, s, threshold := polledGetUser(t)
	server, _, p := pollServed(t, mc, s, "/")
	p.next()
	const bad = "hystrix.command.GetUser.circuitBreaker.errorThresholdPercent=35\n"
	server.set(bad, `"v2"`, 0)
	p.next()
	p.next() // 304
	server.set(bad, `"v2-again"`, 0)
	p.next() // the same body, under another validator
	assert.Equal(t, 25, threshold())
	assert.Len(t, p.reported(), 1, "one refusal, reported once: %v", p.reported())
	assert.ErrorIs(t, p.stop(), context.Canceled)
}

// A GET that the end of PollURL's context cuts short is not a GET that
// failed: the program stopping the poll is not told that the properties
// before stay in force because of "context canceled".
func TestPollURLDoesNotReportItsOwnEnd(t *testing.T) {
	mc, s, _ := polledGetUser(t)
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done() // a slow server: the poll ends first
	}))
	defer srv.Close()
	p := startPoller(t, mc, func(ctx context.Context, report func(error)) error {
		return s.PollURL(ctx, srv.Client(), srv.URL, time.Minute, report)
	})
	<-arrived
	assert.ErrorIs(t, p.stop(), context.Canceled)
	assert.Empty(t, p.reported())
}
