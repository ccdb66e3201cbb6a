package hystrixprops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// maxPropertiesSize bounds the body PollURL reads: a properties file of
// a service's commands is a few kilobytes, and a server that answers
// more is not one.
const maxPropertiesSize = 4 << 20

// PollURL reads the properties at url at once and then every interval on
// the Source's registry's clock, as Archaius polls the URLs of
// archaius.configurationSource.additionalUrls (a configuration server's,
// an object store's), and puts them in force with Set each time they
// changed, until ctx ends; then it returns ctx's error. client sends the
// GETs (http.DefaultClient if nil), each bounded by interval.
//
// Each GET after the first is conditional, with the ETag and
// Last-Modified of the answer before, so that a server that answers 304
// Not Modified is not read again; a body that is the same as the one
// before is not put in force again either. A GET that fails (an error, a
// status other than 200 or 304, a body over 4 MiB), a body that does not
// parse, and Set's errors are reported to report, if not nil, once until
// the answer changes; the properties before stay in force.
func (s *Source) PollURL(ctx context.Context, client *http.Client, url string, interval time.Duration, report func(error)) error {
	if interval <= 0 {
		return fmt.Errorf("hystrixprops: PollURL: interval %v is not positive", interval)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("hystrixprops: PollURL: %w", err)
	}
	if client == nil {
		client = http.DefaultClient
	}
	p := &urlPoll{s: s, client: client, req: req, timeout: interval}
	return s.poll(ctx, interval, func() {
		err := p.read()
		if ctx.Err() != nil {
			return // a GET cut short by the end of the poll, not a failure
		}
		if err == nil {
			p.failed = ""
			return
		}
		if err.Error() != p.failed && report != nil {
			report(err)
		}
		p.failed = err.Error()
	})
}

// urlPoll is what PollURL keeps from one GET to the next.
type urlPoll struct {
	s       *Source
	client  *http.Client
	req     *http.Request
	timeout time.Duration

	etag, lastModified string // the validators of the body in force
	body               []byte // the body last put in force, or refused
	bodyRead           bool   // body is one read: the first may be empty
	bodyErr            error  // why body was refused, or nil
	failed             string // the error last reported, or ""
}

// errNotModified is a GET that says the properties did not change.
var errNotModified = errors.New("not modified")

// read GETs the properties and puts them in force if they changed.
func (p *urlPoll) read() error {
	body, err := p.get()
	switch {
	case err == errNotModified:
		// The body the validators came with is still the server's: put
		// in force, or refused still.
		return p.bodyErr
	case err != nil:
		return fmt.Errorf("hystrixprops: GET %s: %w; the properties before stay in force", p.req.URL.Redacted(), err)
	case p.bodyRead && bytes.Equal(body, p.body):
		// The same body: not put in force again, though a GET failed
		// in between; refused again if it was.
		return p.bodyErr
	}
	p.body, p.bodyRead = body, true
	props, err := Parse(bytes.NewReader(body))
	if err != nil {
		p.bodyErr = fmt.Errorf("%s: %w; the properties before stay in force", p.req.URL.Redacted(), err)
	} else {
		p.bodyErr = p.s.Set(props)
	}
	return p.bodyErr
}

// get returns the body of a GET, or errNotModified.
func (p *urlPoll) get() ([]byte, error) {
	ctx, cancel := context.WithTimeout(p.req.Context(), p.timeout)
	defer cancel()
	req := p.req.Clone(ctx)
	if p.etag != "" {
		req.Header.Set("If-None-Match", p.etag)
	}
	if p.lastModified != "" {
		req.Header.Set("If-Modified-Since", p.lastModified)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotModified:
		return nil, errNotModified
	case http.StatusOK:
	default:
		return nil, fmt.Errorf("the server answered %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPropertiesSize+1))
	switch {
	case err != nil:
		return nil, err
	case len(body) > maxPropertiesSize:
		return nil, fmt.Errorf("the body is over %d bytes", maxPropertiesSize)
	}
	p.etag, p.lastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	return body, nil
}
