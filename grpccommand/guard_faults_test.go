package grpccommand

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rxhystrix/rxhystrix/command"
)

// A guard's key takes faults as any command's, which makes them the
// server's own: the handler is not called, and the caller gets the
// injected error, with its code when it has one, as Envoy's fault filter
// aborts a call with the status it is given. The injected error stands
// for the handler's, so its code says what it is, as the handler's does:
// a FAILURE when the guard counts the code, a BAD_REQUEST otherwise.
func TestGuardFaultsAreTheServersFaults(t *testing.T) {
	var calls atomic.Int32
	handler := func(context.Context, any) (any, error) { calls.Add(1); return "reply", nil }
	for _, tc := range []struct {
		name   string
		err    error
		code   codes.Code
		events string
	}{
		{"a status", status.Error(codes.Unavailable, "injected"), codes.Unavailable, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]"},
		{"no status", nil, codes.Unknown, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]"},
		{"a code the guard does not count", status.Error(codes.NotFound, "injected"), codes.NotFound, "[BAD_REQUEST: 1, EXCEPTION_THROWN: 1]"},
		{"a bad request", command.BadRequest(status.Error(codes.InvalidArgument, "injected")), codes.InvalidArgument, "[BAD_REQUEST: 1, EXCEPTION_THROWN: 1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGuardHarness(t, command.Config{Faults: command.FaultConfig{Enabled: true, ErrorPercentage: 100, Error: tc.err}})
			_, err := g.call(handler)
			assert.Equal(t, tc.code, status.Code(err))
			if tc.err == nil {
				assert.ErrorIs(t, err, command.ErrInjectedFault)
			}
			assert.Equal(t, tc.events, g.Events(DefaultGuardKey))
		})
	}
	assert.Zero(t, calls.Load(), "no call reached the handler")
}
