package httpcommand

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

func TestDefaultFailureStatus(t *testing.T) {
	for code, want := range map[int]bool{
		200: false, 304: false, 400: false, 404: false, 408: false, 428: false, 429: true, 431: false,
		500: true, 501: true, 503: true, 599: true,
	} {
		assert.Equal(t, want, DefaultFailureStatus(code), "%d", code)
	}
}

// WithFailureStatus says which statuses are failures: a 501 it leaves
// out is a bad request, the caller getting its response as it is, while
// a 404 it adds is a failure, answered by the fallback as a 503 is.
func TestWithFailureStatus(t *testing.T) {
	var fellBack []int
	h := newHarness(t, WithFailureStatus(func(code int) bool {
		return code == http.StatusNotFound || (code != http.StatusNotImplemented && DefaultFailureStatus(code))
	}), WithFallback(func(req *http.Request, err error) (*http.Response, error) {
		var se *StatusError
		require.ErrorAs(t, err, &se)
		fellBack = append(fellBack, se.StatusCode)
		return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{},
			Body: io.NopCloser(strings.NewReader("cached")), Request: req}, nil
	}))

	notImplemented := server(t, status(http.StatusNotImplemented))
	resp, err := h.get(t, notImplemented.URL)
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotImplemented, resp.StatusCode)
	assert.Equal(t, "Not Implemented", readBody(t, resp))
	assert.Equal(t, int64(1), h.events(hostOf(notImplemented))[metricsstream.BadRequest])
	assert.Zero(t, h.events(hostOf(notImplemented))[metricsstream.Failure])

	for _, code := range []int{http.StatusNotFound, http.StatusServiceUnavailable} {
		srv := server(t, status(code))
		resp, err := h.get(t, srv.URL)
		require.NoError(t, err)
		assert.Equal(t, "cached", readBody(t, resp), "%d: the fallback's answer", code)
		ev := h.events(hostOf(srv))
		assert.Equal(t, int64(1), ev[metricsstream.Failure], "%d", code)
		assert.Equal(t, int64(1), ev[metricsstream.FallbackSuccess], "%d", code)
	}
	assert.Equal(t, []int{http.StatusNotFound, http.StatusServiceUnavailable}, fellBack)

	ok := server(t, status(http.StatusOK))
	resp, err = h.get(t, ok.URL)
	require.NoError(t, err)
	assert.Equal(t, "OK", readBody(t, resp))
	assert.Equal(t, int64(1), h.events(hostOf(ok))[metricsstream.Success])
}
