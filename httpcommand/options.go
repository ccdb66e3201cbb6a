package httpcommand

import (
	"context"
	"errors"
	"net/http"

	"github.com/rxhystrix/rxhystrix/command"
)

// An Option changes what [New] makes.
type Option interface {
	apply(*Transport)
}

type optionFunc func(*Transport)

func (f optionFunc) apply(t *Transport) { f(t) }

// WithBase sends the requests with rt instead of http.DefaultTransport.
func WithBase(rt http.RoundTripper) Option {
	mustNotNil("WithBase", rt == nil)
	return optionFunc(func(t *Transport) { t.base = rt })
}

// WithRegistry makes the commands in r instead of command.DefaultRegistry,
// so their metrics are r.Metrics()'s.
func WithRegistry(r *command.Registry) Option {
	mustNotNil("WithRegistry", r == nil)
	return optionFunc(func(t *Transport) { t.commands.Registry = r })
}

// WithKey keys each request by f instead of [Host]: one command, hence
// one breaker, one set of metrics and one pool, per distinct key. A key
// must be non-empty UTF-8; RoundTrip fails a request whose key is not
// with an error that is command.ErrInvalidKey (by errors.Is).
func WithKey(f func(*http.Request) string) Option {
	mustNotNil("WithKey", f == nil)
	return optionFunc(func(t *Transport) { t.key = f })
}

// WithConfig gives the command of each key its configuration, read when
// the key is first used (command.Registry.Configure changes it later).
// Its Pool defaults to the key, so each key has a pool of its own even
// when keys share a Group. RoundTrip fails the requests of a key whose
// configuration is invalid with Config.Validate's error.
func WithConfig(f func(key string) command.Config) Option {
	mustNotNil("WithConfig", f == nil)
	return optionFunc(func(t *Transport) { t.commands.Config = f })
}

// WithPoolConfig gives the pool of each key its configuration
// (command.Registry.ConfigurePool), when the key is first used.
func WithPoolConfig(f func(key string) command.PoolConfig) Option {
	mustNotNil("WithPoolConfig", f == nil)
	return optionFunc(func(t *Transport) { t.commands.PoolConfig = f })
}

// WithFailureStatus makes f, instead of [DefaultFailureStatus], say which
// response statuses count as failures: in the breaker's health, retried
// if the key retries, answered by the fallback, with a [*StatusError] as
// the cause. Any other status of 400 or more is then a bad request, and
// any other below 400 a success. For a downstream whose 501 Not
// Implemented says that the request was wrong, not that the server is:
//
//	httpcommand.WithFailureStatus(func(code int) bool {
//		return code != http.StatusNotImplemented && httpcommand.DefaultFailureStatus(code)
//	})
//
// f is called for every response, from any goroutine.
func WithFailureStatus(f func(code int) bool) Option {
	mustNotNil("WithFailureStatus", f == nil)
	return optionFunc(func(t *Transport) { t.failure = f })
}

// WithFallback answers the requests that failed, timed out, were
// rejected or short-circuited: f gets the request and the command's
// error (a *StatusError as its cause for a 5xx or 429) and can build a
// response, cached or degraded, or return an error. Bad requests (other
// 4xx) never reach it. f must return a response or an error: neither is
// a failure of the fallback. A response of f's that the caller does not get,
// because it left while f ran, is closed.
func WithFallback(f func(req *http.Request, err error) (*http.Response, error)) Option {
	mustNotNil("WithFallback", f == nil)
	return optionFunc(func(t *Transport) {
		t.commands.Fallback = func(_ context.Context, c *call, err error) (*http.Response, error) {
			resp, err := f(c.req, err)
			if resp == nil && err == nil {
				return nil, errFallbackAnsweredNothing // a nil response needs an error
			}
			if resp != nil && !c.keep(resp) {
				return nil, context.Canceled
			}
			return resp, err
		}
	})
}

// errFallbackAnsweredNothing is the fallback's error when the function of
// WithFallback returned neither a response nor an error: a RoundTripper
// must not return a nil response without an error.
var errFallbackAnsweredNothing = errors.New("httpcommand: the fallback returned neither a response nor an error")

func mustNotNil(option string, isNil bool) {
	if isNil {
		panic("httpcommand: " + option + " with nil argument")
	}
}
