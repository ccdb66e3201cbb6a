package httpcommand

import (
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/command"
)

// A handler that flushes through http.ResponseController learns, through
// the guard as without it, that the server's writer cannot flush.
func TestGuardResponseControllerFlushTellsNotSupported(t *testing.T) {
	var flushErr error
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		flushErr = http.NewResponseController(w).Flush()
	})
	g := newGuardHarness(t, h, command.Config{})
	rec := httptest.NewRecorder()
	g.guard.ServeHTTP(onlyWriter{rec}, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.ErrorIs(t, flushErr, http.ErrNotSupported, "the guard's writer claims a flush it could not do")
}

// A flush that fails on the connection has still sent the response's
// headers, as net/http counts them: the handler gets the flush's error,
// and the guard's answer to the timeout that follows is not written
// after them (net/http would log a superfluous WriteHeader).
func TestGuardFailedFlushBeginsTheResponse(t *testing.T) {
	flushed := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Unix(1, 0)) // long past: every write on the connection fails
		flushed <- rc.Flush()
		<-r.Context().Done() // the guard's timeout
	})
	g := newGuardHarness(t, h, command.Config{Timeout: 300 * time.Millisecond})
	srv, serverLog, served := serveGuard(t, g)

	clientDone := getAside(srv.URL)
	err := <-flushed
	g.Clock.Advance(300 * time.Millisecond)
	<-served
	srv.Close()
	<-clientDone
	assert.Error(t, err, "the flush failed on the connection")
	assert.NotContains(t, serverLog.String(), "superfluous", "the guard answered after the headers went")
	require.False(t, errors.Is(err, http.ErrNotSupported))
}

// net/http sends 101 Switching Protocols as a final status, not as an
// informational 1xx: a handler that wrote it has begun the response, and
// the guard's answer to the timeout that follows must not be written
// after it.
func TestGuardSwitchingProtocolsBeginsTheResponse(t *testing.T) {
	entered := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusSwitchingProtocols)
		close(entered)
		<-r.Context().Done() // the guard's timeout
	})
	g := newGuardHarness(t, h, command.Config{Timeout: 300 * time.Millisecond})
	srv, serverLog, served := serveGuard(t, g)

	clientDone := getAside(srv.URL)
	<-entered
	g.Clock.Advance(300 * time.Millisecond)
	<-served
	srv.Close()
	<-clientDone
	assert.NotContains(t, serverLog.String(), "superfluous", "the guard answered after the 101")
	assert.Equal(t, "[TIMEOUT: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", g.Events(DefaultGuardKey))
}

// serveGuard serves g's guard on a loopback server whose error log, where
// net/http reports a superfluous WriteHeader, it returns; served is
// closed once the guard has served a request.
func serveGuard(t *testing.T, g *guardHarness) (srv *httptest.Server, serverLog *strings.Builder, served <-chan struct{}) {
	serverLog = new(strings.Builder)
	done := make(chan struct{})
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		g.guard.ServeHTTP(w, r)
	}))
	srv.Config.ErrorLog = log.New(serverLog, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, serverLog, done
}

// getAside GETs url on a goroutine of its own and reads the answer's body
// to its end; the channel it returns is closed once that is done.
func getAside(url string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	}()
	return done
}
