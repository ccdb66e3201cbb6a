package metricsstream

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzHandlerQuery sends the stream any query string: it must answer 200
// with a stream or 400 with a message that names the delay parameter,
// never panic, and agree with net/url about what the query asks for.
func FuzzHandlerQuery(f *testing.F) {
	for _, q := range []string{
		"", "delay=500", "delay=1", "delay=3600000", "delay=0", "delay=-1", "delay=3600001",
		"delay=abc", "delay=", "delay=%35%30", "delay=%zz", "delay=1&delay=x", "delay=x&delay=1",
		"title=Checkout&delay=2000", "stream=http%3A%2F%2Fh%2Fs&delay=10", "delay=99999999999999999999",
		"delay=+5", "delay= 5", "delay=5;x=1", "%64elay=7", "delay", "&&=&", "delay=1e3", "delay=0x10",
	} {
		f.Add(q)
	}
	reg, _ := newStreamRegistry()
	reg.Command("C", Config{})
	h := Handler(WithRegistry(reg))
	f.Fuzz(func(t *testing.T, rawQuery string) {
		rec := serveOnce(h, http.MethodGet, rawQuery)
		switch rec.Code {
		case http.StatusOK:
			assert.Equal(t, streamContentType, rec.Header().Get("Content-Type"))
			body := rec.Body.String()
			assert.True(t, strings.HasPrefix(body, `data: {"type":"HystrixCommand","name":"C",`), "a frame: %q", body)
			assert.True(t, strings.HasSuffix(body, "\n\nping: \n\n"), "ends with a ping: %q", body)
		case http.StatusBadRequest:
			assert.Contains(t, rec.Body.String(), "query parameter delay")
		default:
			t.Fatalf("status %d for %q: %s", rec.Code, rawQuery, rec.Body.String())
		}

		// Where net/url reads the query without trouble, it decides.
		if strings.Contains(rawQuery, ";") {
			return
		}
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		valid := true
		if d := q.Get("delay"); d != "" {
			ms, err := strconv.ParseInt(d, 10, 64)
			valid = err == nil && ms >= 1 && ms <= maxDelayMillis
		}
		want := http.StatusBadRequest
		if valid {
			want = http.StatusOK
		}
		require.Equal(t, want, rec.Code, "query %q", rawQuery)
	})
}
