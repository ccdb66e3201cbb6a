package httpcommand

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"unicode/utf8"

	"github.com/rxhystrix/rxhystrix/command"
)

// Transport is an [http.RoundTripper] that runs every request as a
// command of the key [WithKey] gives it (its URL's host by default), in a
// worker pool of that key; the package documentation says what it counts
// and when the command ends. Get one with [New]; it is safe for
// concurrent use.
type Transport struct {
	base       http.RoundTripper
	registry   *command.Registry
	key        func(*http.Request) string
	config     func(key string) command.Config
	poolConfig func(key string) command.PoolConfig
	fallback   func(*http.Request, error) (*http.Response, error)

	mu       sync.Mutex
	commands map[string]*command.Command[*call, *http.Response]
}

// New returns a Transport. Without options it sends requests with
// http.DefaultTransport, as commands of command.DefaultRegistry keyed
// by host, with Hystrix's default configuration (a 1s timeout, a pool of
// 10 workers per host) and no fallback. It panics if an option is nil.
func New(opts ...Option) *Transport {
	t := &Transport{
		base:     http.DefaultTransport,
		registry: command.DefaultRegistry,
		key:      Host,
		commands: make(map[string]*command.Command[*call, *http.Response]),
	}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("httpcommand: New: option %d is nil", i))
		}
		o.apply(t)
	}
	return t
}

// Host is the default key of a request: its URL's host, with the port
// when the URL has one ("api.example.com", "127.0.0.1:8080").
func Host(req *http.Request) string { return req.URL.Host }

// RoundTrip runs req as a command of its key and returns the response
// once its headers have arrived, its body still to be read; the package
// documentation lists the outcomes. The request's context is the
// command's: cancelling it cancels the command, and the command's
// timeout reaches the request as a cancellation of the context it is
// sent with.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	key := t.key(req)
	if key == "" || !utf8.ValidString(key) {
		closeBody(req)
		return nil, fmt.Errorf("httpcommand: the key of a request to %s is %q: %w", req.URL.Redacted(), key, command.ErrInvalidKey)
	}
	cmd, err := t.command(key)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	ctx := req.Context()
	if !replayable(req) {
		ctx = command.OneAttempt(ctx)
	}
	c := &call{req: req}
	resp, err := cmd.Execute(ctx, c)
	var client *clientError
	if errors.As(err, &client) {
		resp, err = client.resp, nil
	}
	c.finish(resp)
	return resp, err
}

// CloseIdleConnections closes the idle connections of the transport that
// sends the requests, when it has such a method, as http.Client's does.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// command returns the command of key, made on first use: its config and
// pool config are read then, and hold as the registry's first seen for
// the key.
func (t *Transport) command(key string) (*command.Command[*call, *http.Response], error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.commands[key]; ok {
		return c, nil
	}
	var cfg command.Config
	if t.config != nil {
		cfg = t.config(key)
	}
	if cfg.Pool == "" {
		cfg.Pool = key // a pool per key, even when keys share a group
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("httpcommand: config of %q: %w", key, err)
	}
	if t.poolConfig != nil {
		if err := t.registry.ConfigurePool(cfg.Pool, t.poolConfig(key)); err != nil {
			return nil, fmt.Errorf("httpcommand: pool config of %q: %w", key, err)
		}
	}
	c := command.New(key, t.send, command.WithRegistry(t.registry), command.WithConfig(cfg))
	if t.fallback != nil {
		c = c.WithFallback(func(_ context.Context, c *call, err error) (*http.Response, error) {
			return t.fallback(c.req, err)
		})
	}
	t.commands[key] = c
	return c, nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}
