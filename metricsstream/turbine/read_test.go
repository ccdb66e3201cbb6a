package turbine

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/clock"
)

// rawInstance serves body as an instance's stream, then holds the
// connection open until the request ends.
func rawInstance(t *testing.T, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(body))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// The events are read as server-sent events: data lines joined with a
// newline, either line ending, lines of any length up to the limit.
func TestAggregatorReadsServerSentEvents(t *testing.T) {
	long := strings.Repeat("x", 10_000) // past the reader's buffer
	body := "ping: \n\n" +
		"data: {\"type\":\"T\",\"name\":\"split\",\n" +
		"data: \"c\":1}\n\n" +
		"data: {\"type\":\"T\",\"name\":\"a\n" + // a newline inside a string:
		"data: b\",\"c\":1}\n\n" + // not JSON, ignored
		"data: {\"type\":\"T\",\"name\":\"crlf\",\"c\":2}\r\n\r\n" +
		": a comment\n" +
		"data: {\"type\":\"T\",\"name\":\"long\",\"group\":\"" + long + "\"}\n\n"
	url := rawInstance(t, body)
	mc := clock.NewManual(t0)
	a, err := New([]string{url}, WithClock(mc))
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })

	s := waitSum(t, a, mc, "every event is read", func(s sum) bool { return s["T long"] != nil })
	assert.Equal(t, "1", num(s["T split"]["c"]))
	assert.Equal(t, "2", num(s["T crlf"]["c"]))
	assert.Equal(t, long, s["T long"]["group"])
	assert.NotContains(t, s, "T ab")
	assert.Equal(t, int64(1), a.Instances()[0].Ignored)
}

func TestAggregatorGivesUpAnEventOverItsLimit(t *testing.T) {
	half := strings.Repeat("x", maxEventBytes/2+1)
	cases := []struct{ name, body, err string }{
		{"a line", "data: " + strings.Repeat("x", maxEventBytes+10_000) + "\n", "a line of more than 1048576 bytes"},
		{"an event of two lines", "data: " + half + "\ndata: " + half + "\n\n", "wrote an event of more than 1048576 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := rawInstance(t, tc.body)
			a, err := New([]string{url}, WithClock(clock.NewManual(t0)))
			require.NoError(t, err)
			t.Cleanup(func() { a.Close() })
			deadline := time.Now().Add(failAfter)
			for a.Instances()[0].Err == nil {
				require.False(t, time.Now().After(deadline), "the stream was not given up")
				runtime.Gosched()
			}
			assert.ErrorContains(t, a.Instances()[0].Err, tc.err)
		})
	}
}
