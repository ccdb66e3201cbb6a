package httpcommand

import (
	"context"
	"io"
	"net/http"
	"sync"

	"golang.org/x/net/http/httpguts"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/internal/faultmark"
)

// call is one request on its way through a command. The caller and run
// can part at any time (a timeout, a rejection, a cancellation), so they
// settle under mu who closes what: a request body that was never sent, a
// response that nobody will read. With retries or hedges, run is called
// once per attempt: the first sends the request's own body, the others
// one made again by its GetBody (replayable says which requests may be
// sent more than once).
type call struct {
	req *http.Request

	mu       sync.Mutex
	finished bool             // the caller has its answer
	sent     bool             // run handed req to the base transport, which closes its body
	resps    []*http.Response // what the attempts got, while the caller has not taken it
}

// send is the command's run: it sends the request on a context of the
// caller's that also ends with run's context until the headers arrive,
// and only with the caller's (or the body's Close) after, so that the
// body stays readable once the command has ended.
func (t *Transport) send(runCtx context.Context, c *call) (*http.Response, error) {
	c.mu.Lock()
	if c.finished {
		c.mu.Unlock()
		return nil, context.Canceled
	}
	again := c.sent
	c.sent = true
	c.mu.Unlock()

	ctx, cancel := context.WithCancel(c.req.Context())
	req := c.req.WithContext(ctx)
	if req.Header == nil {
		// A request made by hand, marked or not: http.Client sends it with
		// an empty Header, where http.Transport would refuse it.
		req.Header = http.Header{}
	}
	if t.faultHeader != "" {
		if v, marked := faultmark.Value(ctx); marked {
			req.Header = req.Header.Clone() // the caller's request is not ours to change
			req.Header.Set(t.faultHeader, v)
		}
	}
	if again {
		body, err := bodyAgain(c.req)
		if err != nil {
			cancel()
			return nil, err
		}
		req.Body = body
	}
	stopRun := context.AfterFunc(runCtx, cancel)
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		stopRun()
		cancel()
		if malformedRequest(req) {
			// The base refused to send it (http.Transport does): the
			// caller's mistake, not the host's failure.
			err = command.BadRequest(err)
		}
		return nil, err
	}
	if resp.Body == nil {
		// A RoundTripper's empty body, which http.Client takes as one
		// (golang.org/issue/38095): drained, wrapped and closed below.
		resp.Body = http.NoBody
	}
	// A failure's body is drained while run's context can still end it:
	// a body that stalls must not hold run past its timeout.
	err = classify(resp, t.failure)
	if _, failed := statusOf(err); failed {
		stopRun()
		cancel()
		return nil, err
	}
	if !stopRun() {
		// The command ended (timed out, say) while the headers came.
		cancel()
		_ = resp.Body.Close()
		return nil, runCtx.Err()
	}
	resp.Body = releasing(resp.Body, cancel)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished {
		_ = resp.Body.Close()
		return nil, context.Canceled
	}
	c.resps = append(c.resps, resp)
	if err != nil {
		return nil, err // a bad request, carrying resp
	}
	return resp, nil
}

// malformedRequest reports whether req has a method, or a header or
// trailer field, that may not be sent, which http.Transport refuses
// before it sends anything. It is asked only of a request that failed.
func malformedRequest(req *http.Request) bool {
	// A method is a token, as a field's name is (net/http's validMethod).
	return (req.Method != "" && !httpguts.ValidHeaderFieldName(req.Method)) ||
		malformedHeader(req.Header) || malformedHeader(req.Trailer)
}

// malformedHeader reports whether h has a field that may not be sent.
func malformedHeader(h http.Header) bool {
	for k, vs := range h {
		if !httpguts.ValidHeaderFieldName(k) {
			return true
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return true
			}
		}
	}
	return false
}

// keep takes resp, a fallback's answer, among the responses that finish
// closes unless the caller gets it, and reports true; once the caller
// has its answer (it left while the fallback ran), it closes resp's body
// and reports false.
func (c *call) keep(resp *http.Response) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished {
		if resp.Body != nil {
			_ = resp.Body.Close()
		}
		return false
	}
	if resp.Body != nil {
		c.resps = append(c.resps, resp)
	}
	return true
}

// finish ends the call for the caller, who got answer (nil or not): a
// request body never sent is closed, and so is every response of run's
// that the caller did not get (a fallback answered, or another attempt
// won a hedge's race), and every fallback's answer it did not get.
func (c *call) finish(answer *http.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finished = true
	if !c.sent {
		closeBody(c.req)
	}
	for _, resp := range c.resps {
		if resp != answer {
			_ = resp.Body.Close()
		}
	}
	c.resps = nil
}

// body is a response body whose Close also releases the context it is
// read on.
type body struct {
	io.ReadCloser
	release func()
}

func (b *body) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}

// writableBody is the body of a 101 Switching Protocols response, the
// connection both ways, which stays writable: httputil.ReverseProxy and
// the WebSocket clients write to it (io.ReadWriteCloser).
type writableBody struct {
	body
	w io.Writer
}

func (b *writableBody) Write(p []byte) (int, error) { return b.w.Write(p) }

// releasing returns rc as a body whose Close also calls release, and
// that is writable if rc is.
func releasing(rc io.ReadCloser, release func()) io.ReadCloser {
	if rw, ok := rc.(io.ReadWriteCloser); ok {
		return &writableBody{body: body{ReadCloser: rc, release: release}, w: rw}
	}
	return &body{ReadCloser: rc, release: release}
}
