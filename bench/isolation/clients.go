package isolation

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/afex/hystrix-go/hystrix"
)

// Client makes the service's calls to its downstream servers.
type Client interface {
	// Get sends GET url and returns nil only for a 200 answer. ctx is
	// cancelled when the run ends, which ends calls still waiting.
	Get(ctx context.Context, url string) error
	// Close releases what the client holds, such as idle connections.
	Close()
}

// ClientKind names a way of calling the servers and makes clients of
// that kind.
type ClientKind struct {
	// Name is short, for flags and tables: "unprotected", "hystrix-go".
	Name string
	// Setup says how the kind protects the calls under cfg, for the
	// report.
	Setup func(cfg Config) string
	// New makes a client for a run of cfg against the servers urls.
	New func(cfg Config, urls []string) Client
}

// kinds lists the client kinds; rxhystrix.go adds its own.
var kinds = []ClientKind{
	{
		Name:  "unprotected",
		Setup: func(Config) string { return "plain http.Client, 30 s timeout" },
		New:   func(Config, []string) Client { return plainClient{newHTTPClient()} },
	},
	{
		Name: "hystrix-go",
		Setup: func(cfg Config) string {
			cfg = cfg.withDefaults()
			return fmt.Sprintf("one command per URL, timeout %v, MaxConcurrentRequests %d", cfg.Timeout, cfg.PoolSize)
		},
		New: newHystrixGoClient,
	},
}

// Kinds returns every client kind built into this binary, unprotected
// first.
func Kinds() []ClientKind { return append([]ClientKind(nil), kinds...) }

// newHTTPClient returns the client every kind sends its requests with:
// a 30 s timeout as in the seed, no proxy, and a transport of its own so
// that runs do not share connections.
func newHTTPClient() *http.Client {
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     30 * time.Second,
		},
	}
}

// plainClient calls the servers with nothing but the http.Client.
type plainClient struct{ http *http.Client }

func (c plainClient) Get(ctx context.Context, url string) error { return get(ctx, c.http, url) }
func (c plainClient) Close()                                    { c.http.CloseIdleConnections() }

// runs numbers the runs, so commands registered globally by one run are
// not those of another.
var runs atomic.Int64

// hystrixGoClient runs each call in the hystrix-go command of its URL.
type hystrixGoClient struct {
	http    *http.Client
	command map[string]string // URL → command name; read-only once made
}

func newHystrixGoClient(cfg Config, urls []string) Client {
	cfg = cfg.withDefaults()
	c := &hystrixGoClient{http: newHTTPClient(), command: make(map[string]string, len(urls))}
	run := runs.Add(1)
	for _, u := range urls {
		name := fmt.Sprintf("isolation-%d-%s", run, u)
		hystrix.ConfigureCommand(name, hystrix.CommandConfig{
			Timeout:               int(cfg.Timeout / time.Millisecond),
			MaxConcurrentRequests: cfg.PoolSize,
		})
		c.command[u] = name
	}
	return c
}

func (c *hystrixGoClient) Get(ctx context.Context, url string) error {
	return hystrix.DoC(ctx, c.command[url], func(ctx context.Context) error { return get(ctx, c.http, url) }, nil)
}

func (c *hystrixGoClient) Close() { c.http.CloseIdleConnections() }
