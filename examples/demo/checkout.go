package main

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/httpcommand"
)

// The demo serves an API of its own, /api/checkout, and calls it: the
// server side of rxhystrix beside the client side. A guard serves each
// request as an execution of the command CheckoutAPI, whose rate limit
// admits 15 requests a second (a burst of 5); three callers send about
// 24 through an httpcommand.Transport, whose key CheckoutClient retries
// once. The guard refuses about a third of them with 429 and a
// Retry-After of a second, the time until its bucket has a token rounded
// up, and the client retries each of them after that second, not on its
// own backoff.

// checkoutPath is where the demo serves its API.
const checkoutPath = "/api/checkout"

// checkoutGuard returns the guarded handler of checkoutPath, with the
// command CheckoutAPI of reg.
func checkoutGuard(reg *command.Registry) http.Handler {
	checkout := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := downstream(r.Context(), between(5*time.Millisecond, 20*time.Millisecond)); err != nil {
			return // the guard's timeout: it answers 503
		}
		_, _ = io.WriteString(w, "checked out\n")
	})
	return &httpcommand.Guard{
		Handler:  checkout,
		Registry: reg,
		Key:      func(*http.Request) string { return "CheckoutAPI" },
		Config: func(string) command.Config {
			return command.Config{
				Group:     "CheckoutService",
				RateLimit: command.RateLimitConfig{Enabled: true, Rate: 15, Burst: 5},
			}
		},
	}
}

// checkoutClient returns the client the demo's callers use on its API:
// each request a command CheckoutClient of reg, in the pool
// CheckoutClients, retried once. It keeps no idle connection, so that
// nothing of it outlives the demo.
func checkoutClient(reg *command.Registry) *http.Client {
	return &http.Client{Transport: httpcommand.New(
		httpcommand.WithBase(&http.Transport{DisableKeepAlives: true}),
		httpcommand.WithRegistry(reg),
		httpcommand.WithKey(func(*http.Request) string { return "CheckoutClient" }),
		httpcommand.WithConfig(func(string) command.Config {
			return command.Config{
				Group: "CheckoutService",
				Pool:  "CheckoutClients",
				Retry: command.RetryConfig{MaxAttempts: 2},
			}
		}),
	)}
}

// checkOut sends one request of the demo's API at base.
func checkOut(ctx context.Context, client *http.Client, base string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+checkoutPath, nil)
	if err != nil {
		panic(err) // base is the demo's own address
	}
	req.Header.Set("Idempotency-Key", "demo") // so that the Transport may send it again
	resp, err := client.Do(req)
	if err != nil {
		return // the metrics record it
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
}
