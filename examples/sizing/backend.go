package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// slowBackend is service B of part 1, on 127.0.0.1: it answers every
// request after its current latency.
type slowBackend struct {
	latency atomic.Int64 // nanoseconds
}

func (b *slowBackend) setLatency(d time.Duration) { b.latency.Store(int64(d)) }

func (b *slowBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := time.NewTimer(time.Duration(b.latency.Load()))
	defer t.Stop()
	select {
	case <-t.C:
		io.WriteString(w, "ok")
	case <-r.Context().Done(): // the caller gave up
	}
}

// get asks url with client and reads the whole answer.
func get(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return body, nil
}
