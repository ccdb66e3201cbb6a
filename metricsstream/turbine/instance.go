package turbine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/rxhystrix/rxhystrix/clock"
)

// maxEventBytes bounds one event of an instance's stream, so that an
// instance that never ends an event cannot take the Aggregator's memory.
// Hystrix's largest objects are a few kilobytes.
const maxEventBytes = 1 << 20

// An instance is one stream the Aggregator reads. Its fields below done
// are the Aggregator's, under its lock.
type instance struct {
	url    string
	cancel context.CancelFunc // makes follow return
	done   chan struct{}      // closed when follow returns

	objects   map[objectKey]*object
	connected bool
	err       error
	ignored   int64
}

// follow reads in's stream until ctx ends, asking again retryDelay after
// each stream fails or ends.
func (a *Aggregator) follow(ctx context.Context, in *instance) {
	defer close(in.done)
	for {
		err := a.read(ctx, in)
		a.mu.Lock()
		in.connected, in.err = false, err
		clear(in.objects) // the sum is of the instances read now
		a.mu.Unlock()
		if !a.wait(ctx, a.retryDelay) {
			return
		}
	}
}

// wait waits d on the Aggregator's clock, and reports false if ctx ended
// first.
func (a *Aggregator) wait(ctx context.Context, d time.Duration) bool {
	t := a.clock.NewTimer(d)
	select {
	case <-ctx.Done():
		t.Stop()
		return false
	case <-t.C():
		return true
	}
}

// errStreamEnded is the error of a stream that the instance ended.
var errStreamEnded = errors.New("the stream ended")

// read reads one response of in's stream, adding each object to in's, and
// returns why it ended.
func (a *Aggregator) read(ctx context.Context, in *instance) error {
	// A stream writes at least a ping every frame. One that writes nothing
	// for staleAfter is dead, even if its connection is not closed (a
	// host that went away without a word): it is given up and asked
	// again.
	readCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	idle := a.clock.AfterFunc(a.staleAfter, cancel)
	defer idle.Stop()
	err := a.readStream(readCtx, in, idle)
	if ctx.Err() == nil && readCtx.Err() != nil {
		return fmt.Errorf("%s wrote nothing for %v", redacted(in.url), a.staleAfter)
	}
	return err
}

// readStream reads one response of in's stream, adding each object to
// in's and resetting idle at each line, and returns why it ended.
func (a *Aggregator) readStream(ctx context.Context, in *instance, idle clock.Timer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", redacted(in.url), resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return fmt.Errorf("%s answered %q, not an event stream", redacted(in.url), ct)
	}
	a.mu.Lock()
	in.connected, in.err = true, nil
	a.mu.Unlock()

	r := bufio.NewReader(resp.Body)
	var data []byte
	for {
		line, err := readLine(r)
		idle.Reset(a.staleAfter)
		if err != nil {
			if err == io.EOF {
				return errStreamEnded
			}
			return err
		}
		switch {
		case line == nil: // the blank line that ends an event
			if len(data) > 0 {
				a.receive(in, data)
				data = data[:0]
			}
		case bytes.HasPrefix(line, []byte("data:")):
			// Server-sent events: the data lines of one event, each
			// without "data:" and one space, joined with newlines.
			v := bytes.TrimPrefix(line[len("data:"):], []byte(" "))
			if len(data) > 0 {
				data = append(data, '\n')
			}
			if len(data)+len(v) > maxEventBytes {
				return fmt.Errorf("%s wrote an event of more than %d bytes", redacted(in.url), maxEventBytes)
			}
			data = append(data, v...)
		}
		// Anything else (ping:, comments, other fields) carries no object.
	}
}

// readLine returns the next line of r without its end, or nil for an
// empty line. A line found longer than maxEventBytes while it is read,
// one buffer of r at a time, is an error; read's check of the event
// catches one that ends within the last buffer.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		long := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull {
			if len(long) > maxEventBytes {
				return nil, fmt.Errorf("a line of more than %d bytes", maxEventBytes)
			}
			line, err = r.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if err != nil {
		return nil, err
	}
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	if len(line) == 0 {
		return nil, nil
	}
	return line, nil
}

// receive adds the object of one event of in's stream.
func (a *Aggregator) receive(in *instance, data []byte) {
	o, err := parseObject(data)
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case err != nil:
		in.ignored++
	case o.deleted:
		delete(in.objects, o.key)
	default:
		o.instance, o.seen = in.url, a.clock.Now()
		in.objects[o.key] = o
	}
}
