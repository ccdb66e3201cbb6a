package dashboard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func get(t *testing.T, h http.Handler, method, target string, header http.Header) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return string(b)
}

func TestHandlerServesThePageWhereverItIsMounted(t *testing.T) {
	plain := Handler()
	mux := http.NewServeMux()
	mux.Handle("/hystrix/", Handler())
	mux.Handle("/stripped/", http.StripPrefix("/stripped", Handler()))

	cases := []struct {
		h           http.Handler
		path        string
		contentType string
		contains    string
	}{
		{plain, "/", "text/html; charset=utf-8", `<div id="commands"`},
		{plain, "/index.html", "text/html; charset=utf-8", `<div id="commands"`},
		{plain, "/dashboard.js", "text/javascript; charset=utf-8", "new EventSource("},
		{plain, "/dashboard.css", "text/css; charset=utf-8", ".card"},
		{mux, "/hystrix/", "text/html; charset=utf-8", `<script src="dashboard.js"`},
		{mux, "/hystrix/dashboard.js", "text/javascript; charset=utf-8", "new EventSource("},
		{mux, "/stripped/", "text/html; charset=utf-8", `<link rel="stylesheet" href="dashboard.css">`},
		{mux, "/stripped/dashboard.css", "text/css; charset=utf-8", ".card"},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			res := get(t, tc.h, http.MethodGet, tc.path, nil)
			require.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, tc.contentType, res.Header.Get("Content-Type"))
			assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
			assert.Contains(t, res.Header.Get("Content-Security-Policy"), "default-src 'self'")
			assert.NotEmpty(t, res.Header.Get("ETag"))
			assert.Contains(t, body(t, res), tc.contains)
		})
	}
}

func TestHandlerPageNeedsNothingFromElsewhere(t *testing.T) {
	for _, path := range []string{"/", "/dashboard.js", "/dashboard.css"} {
		b := body(t, get(t, Handler(), http.MethodGet, path, nil))
		for _, remote := range []string{`src="http`, `href="http`, `src="//`, `href="//`, "url(", "@import"} {
			assert.NotContains(t, b, remote, "%s must work offline", path)
		}
	}
}

func TestHandlerRefusesWhatItDoesNotServe(t *testing.T) {
	h := Handler()
	cases := []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/stream", http.StatusNotFound}, // no WithStream
		{http.MethodGet, "/nothing.js", http.StatusNotFound},
		{http.MethodGet, "/index.htm", http.StatusNotFound},
		{http.MethodPost, "/", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/dashboard.js", http.StatusMethodNotAllowed},
	}
	for _, tc := range cases {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			res := get(t, h, tc.method, tc.path, nil)
			assert.Equal(t, tc.status, res.StatusCode)
			if tc.status == http.StatusMethodNotAllowed {
				assert.Equal(t, "GET, HEAD", res.Header.Get("Allow"))
			}
		})
	}
}

func TestHandlerHeadAndRevalidation(t *testing.T) {
	h := Handler()
	first := get(t, h, http.MethodGet, "/dashboard.js", nil)
	etag := first.Header.Get("ETag")
	require.NotEmpty(t, etag)

	head := get(t, h, http.MethodHead, "/dashboard.js", nil)
	assert.Equal(t, http.StatusOK, head.StatusCode)
	assert.Empty(t, body(t, head))

	again := get(t, h, http.MethodGet, "/dashboard.js", http.Header{"If-None-Match": {etag}})
	assert.Equal(t, http.StatusNotModified, again.StatusCode)
}

func TestHandlerRedirectsAStrippedPathToItsSlash(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/hystrix", http.StripPrefix("/hystrix", Handler()))

	res := get(t, mux, http.MethodGet, "/hystrix?stream=http%3A%2F%2Fh%2Fs", nil)
	assert.Equal(t, http.StatusMovedPermanently, res.StatusCode)
	assert.Equal(t, "./hystrix/?stream=http%3A%2F%2Fh%2Fs", res.Header.Get("Location"),
		"relative, so it cannot leave this host")
}

func TestWithStreamURLSetsThePageDefault(t *testing.T) {
	page := body(t, get(t, Handler(), http.MethodGet, "/", nil))
	assert.Contains(t, page, `<meta name="rxhystrix-default-stream" content="stream">`)

	page = body(t, get(t, Handler(WithStreamURL("http://turbine:8989/turbine.stream?cluster=a&b=c")), http.MethodGet, "/", nil))
	assert.Contains(t, page, `content="http://turbine:8989/turbine.stream?cluster=a&amp;b=c"`)

	page = body(t, get(t, Handler(WithStreamURL(`/s?x="><script>alert(1)</script>`)), http.MethodGet, "/", nil))
	assert.NotContains(t, page, "<script>alert(1)", "the URL is escaped into the page")
}

func TestWithRequestsURLSetsThePageDefault(t *testing.T) {
	page := body(t, get(t, Handler(), http.MethodGet, "/", nil))
	assert.Contains(t, page, `<meta name="rxhystrix-default-requests" content="requests.stream">`)

	page = body(t, get(t, Handler(WithRequestsURL("http://api-1:8080/hystrix/requests.stream")), http.MethodGet, "/", nil))
	assert.Contains(t, page, `<meta name="rxhystrix-default-requests" content="http://api-1:8080/hystrix/requests.stream">`)

	page = body(t, get(t, Handler(WithRequestsURL("")), http.MethodGet, "/", nil))
	assert.Contains(t, page, `<meta name="rxhystrix-default-requests" content="">`, "none")
}

func TestWithStreamServesTheStreamNextToThePage(t *testing.T) {
	var got []string
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.Path)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "ping: \n\n")
	})
	mux := http.NewServeMux()
	mux.Handle("/hystrix/", Handler(WithStream(stream)))

	res := get(t, mux, http.MethodGet, "/hystrix/stream", nil)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	assert.Equal(t, "ping: \n\n", body(t, res))
	assert.Equal(t, []string{"GET /hystrix/stream"}, got, "the stream sees the request unchanged")

	page := get(t, mux, http.MethodGet, "/hystrix/", nil)
	assert.Equal(t, http.StatusOK, page.StatusCode, "the page is still served")
}

func TestBadOptionsPanicNamingTheField(t *testing.T) {
	cases := []struct {
		name string
		f    func()
		want string
	}{
		{"nil Option", func() { Handler(nil) }, "nil Option"},
		{"empty stream URL", func() { WithStreamURL("") }, "WithStreamURL: empty stream URL"},
		{"bad stream URL", func() { WithStreamURL("http://[::1") }, "WithStreamURL: stream URL"},
		{"nil stream", func() { WithStream(nil) }, "WithStream: nil stream handler"},
		{"bad requests URL", func() { WithRequestsURL("http://[::1") }, `WithRequestsURL: requests stream URL "http://[::1"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				require.NotNil(t, r, "no panic")
				msg, _ := r.(string)
				assert.True(t, strings.HasPrefix(msg, "dashboard: "), "got %q", msg)
				assert.Contains(t, msg, tc.want)
			}()
			tc.f()
		})
	}
}

func TestHandlerIsSafeForConcurrentUse(t *testing.T) {
	h := Handler()
	srv := httptest.NewServer(h)
	defer srv.Close()
	done := make(chan error, 8)
	for range 8 {
		go func() {
			res, err := srv.Client().Get(srv.URL + "/dashboard.js")
			if err == nil {
				_, err = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			done <- err
		}()
	}
	for range 8 {
		assert.NoError(t, <-done)
	}
}

// TestHandlerServesThePageUnderAStrippedSlashPrefix mounts the dashboard
// with http.StripPrefix of a prefix that ends in a slash, the common idiom:
// a request for the mount itself, "/hystrix/", has the empty path after the
// prefix and already ends in a slash, so it must get the page, not a
// redirect to "/hystrix/hystrix/" (whose page would then read its stream at
// /hystrix/hystrix/stream).
func TestHandlerServesThePageUnderAStrippedSlashPrefix(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/hystrix/", http.StripPrefix("/hystrix/", Handler()))

	res := get(t, mux, http.MethodGet, "/hystrix/?stream=http%3A%2F%2Fh%2Fs", nil)
	require.Equal(t, http.StatusOK, res.StatusCode, "Location: %s", res.Header.Get("Location"))
	assert.Equal(t, "text/html; charset=utf-8", res.Header.Get("Content-Type"))
	assert.Contains(t, body(t, res), `<div id="commands"`)

	res = get(t, mux, http.MethodGet, "/hystrix/dashboard.js", nil)
	assert.Equal(t, http.StatusOK, res.StatusCode)
}
