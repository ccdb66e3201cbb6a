package httpcommand

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
)

// startWriter is a ResponseWriter that knows when the response it wraps
// starts: the first final WriteHeader (not an informational 1xx; 101
// Switching Protocols is final, as net/http sends it), the
// first Write, or a Flush, sends the headers. Before they go it calls
// before, once, which may still set headers; after, code is the status
// they carry. The guards read code to tell a response Handler began from
// one they may still write; RequestContext's log header is set by
// before.
//
// Handlers assert the optional interfaces of a ResponseWriter, so it
// implements those of net/http's own: http.Flusher, http.Hijacker (a
// WebSocket's upgrade) and io.ReaderFrom (the sendfile of http.ServeFile),
// each by the wrapped writer's, when it has it, through
// http.ResponseController or io.Copy. Deadlines are reached through
// http.ResponseController, which unwraps it.
type startWriter struct {
	http.ResponseWriter
	code   int    // the status of the headers sent; 0 before they are
	before func() // called once, just before the headers are sent; nil once called
}

// beforeHeaders calls before, once.
func (w *startWriter) beforeHeaders() {
	if f := w.before; f != nil {
		w.before = nil
		f()
	}
}

func (w *startWriter) WriteHeader(code int) {
	if w.code == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) { // net/http sends a 101 as final
		w.beforeHeaders()
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *startWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.beforeHeaders()
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush flushes the response, headers first, when the wrapped
// ResponseWriter can; a flush it cannot do starts nothing.
func (w *startWriter) Flush() { _ = w.FlushError() }

// FlushError is Flush that returns the wrapped ResponseWriter's error,
// for http.ResponseController: http.ErrNotSupported when it cannot
// flush. A flush that fails otherwise (on a connection gone) has sent
// the headers as net/http counts them, so the response has begun.
func (w *startWriter) FlushError() error {
	if !canFlush(w.ResponseWriter) {
		// Nothing is sent: before stays for the headers that go later.
		return http.NewResponseController(w.ResponseWriter).Flush()
	}
	w.beforeHeaders()
	err := http.NewResponseController(w.ResponseWriter).Flush()
	if w.code == 0 && !errors.Is(err, http.ErrNotSupported) {
		w.code = http.StatusOK
	}
	return err
}

// canFlush reports whether rw, or a ResponseWriter it wraps, can flush,
// as http.ResponseController finds it; a startWriter in the chain can when
// the writer it wraps can.
func canFlush(rw http.ResponseWriter) bool {
	for {
		switch t := rw.(type) {
		case *startWriter:
			rw = t.ResponseWriter
		case interface{ FlushError() error }, http.Flusher:
			return true
		case interface{ Unwrap() http.ResponseWriter }:
			rw = t.Unwrap()
		default:
			return false
		}
	}
}

// Hijack hands the connection to the handler, when the wrapped
// ResponseWriter can. A hijacked connection is the handler's: nothing
// more is written to it, the guards' answers included.
func (w *startWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && w.code == 0 {
		w.code = http.StatusSwitchingProtocols
	}
	return conn, rw, err
}

// ReadFrom writes what r holds as the response's body, with the wrapped
// ResponseWriter's own ReadFrom when it has one.
func (w *startWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.code == 0 {
		w.beforeHeaders()
		w.code = http.StatusOK
	}
	return io.Copy(w.ResponseWriter, r)
}

// Unwrap returns the wrapped ResponseWriter, for http.ResponseController.
func (w *startWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
