package grpccommand

import (
	"context"

	"google.golang.org/grpc/codes"

	"github.com/rxhystrix/rxhystrix/command"
)

// An Option changes what [UnaryClientInterceptor] and
// [StreamClientInterceptor] make.
type Option interface {
	apply(*client)
}

type optionFunc func(*client)

func (f optionFunc) apply(c *client) { f(c) }

// WithRegistry makes the commands in r instead of command.DefaultRegistry,
// so their metrics are r.Metrics()'s.
func WithRegistry(r *command.Registry) Option {
	mustNotNil("WithRegistry", r == nil)
	return optionFunc(func(c *client) { c.commands.Registry = r })
}

// WithKey keys each call by f(target, method) instead of [Key]: one
// command, hence one breaker and one set of metrics, per distinct key.
// target is the connection's (grpc.ClientConn.Target), method the full
// method ("/orders.Orders/Get"). A key must be non-empty UTF-8; a call
// whose key is not fails with an error that is command.ErrInvalidKey (by
// errors.Is) and has the code Internal.
func WithKey(f func(target, method string) string) Option {
	mustNotNil("WithKey", f == nil)
	return optionFunc(func(c *client) { c.key = f })
}

// WithConfig gives the command of each key its configuration, read when
// the key is first used (command.Registry.Configure changes it later).
// Its Pool defaults to the [Endpoint] of the target of the key's first
// call, so that each downstream has a pool of its own. A call of a key
// whose configuration is invalid fails with Config.Validate's error and
// the code Internal.
func WithConfig(f func(key string) command.Config) Option {
	mustNotNil("WithConfig", f == nil)
	return optionFunc(func(c *client) { c.commands.Config = f })
}

// WithPoolConfig gives the pool of each key its configuration
// (command.Registry.ConfigurePool), when the key is first used; a pool
// that keys share (the methods of one endpoint) takes it at the first use
// of the first of them only, and later ConfigurePool calls hold.
func WithPoolConfig(f func(key string) command.PoolConfig) Option {
	mustNotNil("WithPoolConfig", f == nil)
	return optionFunc(func(c *client) { c.commands.PoolConfig = f })
}

// WithFallback answers the calls that failed, timed out, were rejected
// or short-circuited: f gets the method, the request, the caller's reply
// and the command's error (the server's status as its cause for a
// failure), and either fills reply (from a cache, or with a degraded
// answer) and returns nil, or returns an error, which the caller gets
// with its code if it has one of gRPC's (status.Error). Bad requests
// never reach it. It is for unary calls: StreamClientInterceptor panics
// on it.
func WithFallback(f func(ctx context.Context, method string, req, reply any, err error) error) Option {
	mustNotNil("WithFallback", f == nil)
	return optionFunc(func(c *client) {
		c.commands.Fallback = func(ctx context.Context, call *call, err error) (any, error) {
			if err := f(ctx, call.method, call.req, call.reply, err); err != nil {
				return nil, err
			}
			return call.reply, nil
		}
	})
}

// WithFailureCodes makes the codes cs, instead of [DefaultFailureCodes],
// the ones that count as failures: in the breaker's health, retried if
// the key retries, answered by the fallback. Every other code is a bad
// request. It panics on codes.OK, a code gRPC does not define, or no code
// at all, which would leave the breaker nothing to open on.
func WithFailureCodes(cs ...codes.Code) Option {
	set, err := failureCodes(cs)
	if err != nil {
		panic("grpccommand: WithFailureCodes: " + err.Error())
	}
	return optionFunc(func(c *client) { c.failures = set })
}

func mustNotNil(option string, isNil bool) {
	if isNil {
		panic("grpccommand: " + option + " with nil argument")
	}
}
