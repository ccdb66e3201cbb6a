package grpccommand

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/internal/keyedcommand"
)

// UnaryClientInterceptor returns an interceptor that runs every unary
// call of the connections it is given to as a command of the key
// [WithKey] gives it ([Key] by default: the target's endpoint and the
// method), in a worker pool per endpoint; the package documentation says
// what it counts and what the caller gets. Without options the commands
// are command.DefaultRegistry's, with Hystrix's default configuration (a
// 1s timeout, a pool of 10 workers) and no fallback. It panics if an
// option is nil.
//
//	conn, err := grpc.NewClient(target,
//		grpc.WithTransportCredentials(creds),
//		grpc.WithUnaryInterceptor(grpccommand.UnaryClientInterceptor()))
func UnaryClientInterceptor(opts ...Option) grpc.UnaryClientInterceptor {
	c := newClient("UnaryClientInterceptor", opts)
	c.commands.Run = c.invoke
	return c.intercept
}

// newClient returns a client with opts applied; caller names the
// function whose options they are, for the panic of a nil one.
func newClient(caller string, opts []Option) *client {
	c := &client{key: Key, failures: defaultFailures}
	c.commands.Package = "grpccommand"
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("grpccommand: %s: option %d is nil", caller, i))
		}
		o.apply(c)
	}
	c.commands.BadRequests = c.failures.isBad // a call's error, or a fault injected in its place
	return c
}

// client is what UnaryClientInterceptor's interceptor runs on.
type client struct {
	key      func(target, method string) string
	failures codeSet
	commands keyedcommand.Set[*call, any]
	faultKey string // "": the calls' marks for fault injection are not sent (see WithFaultMetadata)
}

func (c *client) intercept(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	target := cc.Target()
	key, err := keyOf(c.key, target, method)
	if err != nil {
		return finishNow(opts, err)
	}
	cmd, err := c.commands.Get(key, Endpoint(target))
	if err != nil {
		return finishNow(opts, &Error{err: err, code: codes.Internal})
	}
	call := &call{method: method, req: req, reply: reply, cc: cc, invoker: invoker}
	call.opts, call.meta = splitMetaOpts(opts, false)
	answer, err := cmd.Execute(ctx, call)
	if err != nil {
		call.mu.Lock()
		failed := call.failed
		call.mu.Unlock()
		if failed != nil && serversAnswer(err) {
			call.meta.setMetadata(failed)
		}
		err = statusError(err)
		call.meta.finish(err)
		return err
	}
	defer call.meta.finish(nil)
	if a, ok := answer.(*answered); ok {
		moveReply(reply, a.reply)
		call.meta.setMetadata(a.md)
	} else if answer != reply {
		moveReply(reply, answer)
	}
	return nil
}

// serversAnswer reports whether err, a command's, is the server's answer
// to an attempt: a failure or a bad request, whose metadata the caller
// gets, and not the command's own (a timeout, a refusal).
func serversAnswer(err error) bool {
	var cmdErr *command.Error
	return command.IsBadRequest(err) || errors.As(err, &cmdErr) && cmdErr.Failure == command.CommandFailure
}

// keyOf returns the key f gives method on target, or an error of code
// Internal when it is not a valid key.
func keyOf(f func(target, method string) string, target, method string) (string, error) {
	key := f(target, method)
	if !command.ValidKey(key) {
		err := fmt.Errorf("grpccommand: the key of %s on %s is %q: %w", method, target, key, command.ErrInvalidKey)
		return "", &Error{err: err, code: codes.Internal}
	}
	return key, nil
}

// Key is the default key of a call: the endpoint of the connection's
// target and the method, "orders.internal:50051/orders.Orders/Get", so
// that each downstream has breakers of its own even where several serve
// the same service (a cluster per region, say).
func Key(target, method string) string {
	return Endpoint(target) + method
}

// Endpoint is the endpoint of a target in gRPC's name syntax, what the
// pool of its calls is named after: "orders.internal:50051" for
// "dns:///orders.internal:50051", and the target itself when it is not of
// the form "scheme://[authority]/endpoint".
func Endpoint(target string) string {
	_, rest, ok := strings.Cut(target, "://")
	if !ok {
		return target
	}
	_, endpoint, ok := strings.Cut(rest, "/")
	if !ok || endpoint == "" {
		return target
	}
	return endpoint
}
