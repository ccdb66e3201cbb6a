package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// DefaultStreamURL is the stream the page reads unless [WithStreamURL] or the
// page's ?stream= parameter names another: "stream", relative to the page.
const DefaultStreamURL = "stream"

// DefaultRequestsURL is the request events stream the page lists requests
// from unless [WithRequestsURL] or the page's ?requests= parameter names
// another: "requests.stream", relative to the page, where
// metricsstream.RequestEventsHandler is mounted next to the stream.
const DefaultRequestsURL = "requests.stream"

// The page's files: index.html is a template (the default stream URLs go
// into it); the script and the style sheet are served as they are.
//
//go:embed static/index.html static/dashboard.js static/dashboard.css
var static embed.FS

var pageTemplate = template.Must(template.ParseFS(static, "static/index.html"))

// contentSecurityPolicy lets the page run only its own script and style
// sheet, whatever a stream sends, while EventSource may still read a stream
// on any origin.
const contentSecurityPolicy = "default-src 'self'; connect-src *; img-src 'self' data:; base-uri 'none'; form-action 'self'"

// A file is one response body of the dashboard, ready to serve.
type file struct {
	body        []byte
	contentType string
	etag        string
}

func newFile(body []byte, contentType string) file {
	sum := sha256.Sum256(body)
	return file{body: body, contentType: contentType, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
}

// handler is the http.Handler that Handler returns. Its fields are set once,
// so it serves requests concurrently without locks.
type handler struct {
	files  map[string]file // by the last element of the path; "" is the page
	stream http.Handler    // nil when WithStream was not given
}

// Handler returns the dashboard: an http.Handler that serves one web page
// (its HTML, script and style sheet, embedded in the binary, with nothing
// fetched from elsewhere) which reads a Hystrix metrics stream with
// EventSource and draws it as the Hystrix dashboard does.
//
// The handler answers by the last element of the request path, so it works
// wherever it is mounted, with or without [http.StripPrefix]: a path ending
// in "/" or "/index.html" gets the page, ".../dashboard.js" and
// ".../dashboard.css" its files, ".../stream" the handler of [WithStream] if
// one was given, and anything else 404 Not Found. Mount it on a pattern that
// ends in a slash:
//
//	mux.Handle("/hystrix/", dashboard.Handler())
//	mux.Handle("/hystrix/stream", streamHandler) // the page's default stream
//
// An empty path, which only [http.StripPrefix] produces (for a request of
// "/hystrix" when the prefix is "/hystrix"), is redirected to the same path
// with a trailing slash, so that the page's relative links resolve under the
// mount.
//
// The page and its files answer GET and HEAD (with ETag revalidation) and
// refuse other methods with 405. The handler starts no goroutine and is safe
// for concurrent use. Handler panics on a nil Option.
func Handler(opts ...Option) http.Handler {
	o := options{streamURL: DefaultStreamURL, requestsURL: DefaultRequestsURL}
	for _, opt := range opts {
		if opt == nil {
			panic("dashboard: Handler: nil Option")
		}
		opt.apply(&o)
	}
	var page bytes.Buffer
	data := struct{ StreamURL, RequestsURL string }{o.streamURL, o.requestsURL}
	if err := pageTemplate.Execute(&page, data); err != nil {
		panic("dashboard: Handler: " + err.Error()) // the embedded template is fixed; tests cover it
	}
	h := &handler{
		files: map[string]file{
			"":              newFile(page.Bytes(), "text/html; charset=utf-8"),
			"dashboard.js":  newFile(mustRead("static/dashboard.js"), "text/javascript; charset=utf-8"),
			"dashboard.css": newFile(mustRead("static/dashboard.css"), "text/css; charset=utf-8"),
		},
		stream: o.stream,
	}
	h.files["index.html"] = h.files[""]
	return h
}

func mustRead(name string) []byte {
	b, err := static.ReadFile(name)
	if err != nil {
		panic("dashboard: " + err.Error()) // embedded at build time; cannot fail
	}
	return b
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := ""
	if r.URL.Path == "" {
		// http.StripPrefix empties the path of a request for the mount
		// itself. Where the prefix ended in a slash ("/hystrix/"), the
		// request already has its slash: it gets the page.
		if !requestEndsInSlash(r) {
			h.redirectToSlash(w, r)
			return
		}
	} else {
		_, name = path.Split(r.URL.Path)
	}
	if name == DefaultStreamURL && h.stream != nil {
		h.stream.ServeHTTP(w, r)
		return
	}
	f, ok := h.files[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, http.StatusText(http.StatusMethodNotAllowed), http.StatusMethodNotAllowed)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", f.contentType)
	hdr.Set("ETag", f.etag)
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Security-Policy", contentSecurityPolicy)
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.body))
}

// requestEndsInSlash reports whether the path the client asked for (its
// RequestURI, which http.StripPrefix leaves alone) ends in a slash.
func requestEndsInSlash(r *http.Request) bool {
	u, err := url.ParseRequestURI(r.RequestURI)
	return err == nil && strings.HasSuffix(u.Path, "/")
}

// redirectToSlash answers a request whose path http.StripPrefix emptied. The
// original path is in RequestURI; the redirect is relative ("./hystrix/"),
// so it stays on this host whatever that path holds.
func (h *handler) redirectToSlash(w http.ResponseWriter, r *http.Request) {
	u, err := url.ParseRequestURI(r.RequestURI)
	if err != nil || u.Path == "" || u.Path == "/" {
		http.NotFound(w, r)
		return
	}
	target := "./" + url.PathEscape(path.Base(u.Path)) + "/"
	if u.RawQuery != "" {
		target += "?" + u.RawQuery
	}
	w.Header().Set("Location", target)
	w.WriteHeader(http.StatusMovedPermanently)
}
