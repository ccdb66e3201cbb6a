package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// callers send concurrent requests to the service, as the article's
// client loop does, and collect the answers.
type callers struct {
	url  string
	http *http.Client
}

func newCallers(url string) *callers {
	return &callers{url: url, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 20}}}
}

func (c *callers) close() { c.http.CloseIdleConnections() }

// start sends n requests at once; their answers arrive on the channel.
func (c *callers) start(ctx context.Context, n int) <-chan string {
	answers := make(chan string, n)
	for range n {
		go func() { answers <- c.get(ctx) }()
	}
	return answers
}

func (c *callers) get(ctx context.Context) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return "request failed: " + err.Error()
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "request failed: " + err.Error()
	}
	return string(body)
}

// burst sends n requests at once and returns their answers.
func (c *callers) burst(ctx context.Context, n int) ([]string, error) {
	return collect(ctx, c.start(ctx, n), n, nil)
}

// whileHeld sends n requests at once while the downstream holds the calls
// it gets: once held calls have reached it and the other requests have
// their answers, it lets the held ones go, and returns every answer.
func (c *callers) whileHeld(ctx context.Context, site *downstream, n, held int) ([]string, error) {
	arrived, release := site.hold(held)
	defer release()
	answers := c.start(ctx, n)
	var got []string
	for reached := 0; reached < held || len(got) < n-held; {
		select {
		case <-arrived:
			reached++
		case a := <-answers:
			got = append(got, a)
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %d calls to reach the downstream and %d answers: %d and %d came: %w",
				held, n-held, reached, len(got), ctx.Err())
		}
	}
	release()
	return collect(ctx, answers, n, got)
}

// collect appends answers to got until it holds n.
func collect(ctx context.Context, answers <-chan string, n int, got []string) ([]string, error) {
	for len(got) < n {
		select {
		case a := <-answers:
			got = append(got, a)
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for answers: %d of %d came: %w", len(got), n, ctx.Err())
		}
	}
	return got, nil
}

// report prints how many requests got each answer, the most frequent
// first.
func report(w io.Writer, answers []string) {
	counts := map[string]int{}
	for _, a := range answers {
		counts[a]++
	}
	kinds := make([]string, 0, len(counts))
	for a := range counts {
		kinds = append(kinds, a)
	}
	slices.SortFunc(kinds, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	for _, a := range kinds {
		fmt.Fprintf(w, "   %2d x %s\n", counts[a], a)
	}
}

// sleepUntil waits until t, or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
