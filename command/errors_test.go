package command

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Error reads like Hystrix's messages, and errors.Is finds the sentinel of
// its failure, its cause and its fallback's error.
func TestErrorMessagesAndMatching(t *testing.T) {
	errFallback := errors.New("cache down")
	cases := []struct {
		err  *Error
		text string
		is   []error
		not  []error
	}{
		{&Error{Command: "GetUser", Failure: TimeoutFailure, Cause: ErrTimeout, FallbackErr: ErrFallbackMissing},
			"GetUser timed-out and no fallback available", []error{ErrTimeout, ErrFallbackMissing}, []error{ErrShortCircuited}},
		{&Error{Command: "GetUser", Failure: ShortCircuitFailure, Cause: ErrShortCircuited, FallbackErr: errFallback},
			"GetUser short-circuited and fallback failed: cache down", []error{ErrShortCircuited, errFallback}, []error{ErrTimeout}},
		{&Error{Command: "GetUser", Failure: PoolRejectedFailure, Cause: ErrPoolRejected, FallbackErr: ErrFallbackDisabled},
			"GetUser could not be queued for execution and fallback disabled", []error{ErrPoolRejected, ErrFallbackDisabled}, nil},
		{&Error{Command: "GetUser", Failure: SemaphoreRejectedFailure, Cause: ErrSemaphoreRejected, FallbackErr: ErrFallbackMissing},
			"GetUser could not acquire a semaphore for execution and no fallback available", []error{ErrSemaphoreRejected}, []error{ErrPoolRejected}},
		{&Error{Command: "GetUser", Failure: FallbackRejectedFailure, Cause: errBoom, FallbackErr: ErrFallbackRejected},
			"GetUser fallback execution rejected", []error{ErrFallbackRejected, errBoom}, nil},
		{&Error{Command: "GetUser", Failure: CommandFailure, Cause: errBoom, FallbackErr: ErrFallbackMissing},
			"GetUser failed and no fallback available (cause: boom)", []error{errBoom, ErrFallbackMissing}, []error{ErrTimeout, ErrBadRequest}},
		{&Error{Command: "GetUser", Failure: CommandFailure},
			"GetUser failed", nil, []error{errBoom}},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			assert.Equal(t, tc.text, tc.err.Error())
			for _, target := range tc.is {
				assert.ErrorIs(t, tc.err, target)
			}
			for _, target := range tc.not {
				assert.NotErrorIs(t, tc.err, target)
			}
			var ce *Error
			require.ErrorAs(t, fmt.Errorf("wrapped: %w", tc.err), &ce)
			assert.Same(t, tc.err, ce)
		})
	}
	assert.Empty(t, (&Error{Command: "GetUser"}).Unwrap())
}

// BadRequest marks an error as the caller's fault; nil stays nil.
func TestBadRequestError(t *testing.T) {
	assert.NoError(t, BadRequest(nil))
	invalid := errors.New("id must be positive")
	bad := BadRequest(invalid)
	assert.Equal(t, "bad request: id must be positive", bad.Error())
	assert.ErrorIs(t, bad, invalid)
	assert.ErrorIs(t, bad, ErrBadRequest)
	assert.True(t, IsBadRequest(bad))
	assert.True(t, IsBadRequest(fmt.Errorf("calling users: %w", bad)), "wrapped, it is still a bad request")
	assert.False(t, IsBadRequest(invalid))
	assert.False(t, IsBadRequest(nil))

	// A run that wraps a bad request reports a bad request too.
	h := newHarness(t)
	wrapped := fmt.Errorf("calling users: %w", bad)
	c := New("GetUser", func(ctx context.Context, id int) (string, error) { return "", wrapped }, WithRegistry(h.reg)).WithFallback(fallbackName)
	_, err := c.Execute(context.Background(), 1)
	assert.Same(t, wrapped, err)
	assert.Equal(t, evs("BAD_REQUEST"), h.events())
}

// A PanicError unwraps to the panic value when it is an error.
func TestPanicError(t *testing.T) {
	pe := newPanicError(errBoom)
	assert.Equal(t, "panic: boom", pe.Error())
	assert.ErrorIs(t, pe, errBoom)
	assert.Contains(t, string(pe.Stack), "TestPanicError")
	assert.NoError(t, newPanicError(42).Unwrap())
	assert.Equal(t, "panic: 42", newPanicError(42).Error())
}

// A fallback that is itself a command (Hystrix's fallback via network)
// and fails for want of a fallback of its own: the outer command's
// fallback ran and failed, and its message says so, naming the inner
// error, rather than that the outer command had no fallback.
func TestMessageOfAFallbackFailingWithAnotherCommandsError(t *testing.T) {
	h := newHarness(t)
	inner := New("Secondary", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation}))
	outer := New("Primary", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation})).WithFallback(func(ctx context.Context, id int, _ error) (string, error) {
		return inner.Execute(ctx, id)
	})
	_, err := outer.Execute(context.Background(), 1)
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "Primary", ce.Command)
	assert.Equal(t, "Primary failed and fallback failed: Secondary failed and no fallback available (cause: boom) (cause: boom)", err.Error())
}

// fallbackTypedError is an error type a fallback fails with, for
// errors.As.
type fallbackTypedError struct{ code int }

func (e *fallbackTypedError) Error() string { return "fallback typed error" }

// errors.As sees into an *Error's FallbackErr as errors.Is does: the
// *PanicError of a fallback that panicked, with its stack, and a typed
// error the fallback returned, are found; the Cause still comes first.
func TestErrorsAsFindsTheFallbacksError(t *testing.T) {
	h := newHarness(t)
	panicking := New("GetUser", succeedRun, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Faults:    FaultConfig{Enabled: true, ErrorPercentage: 100},
	})).WithFallback(func(context.Context, int, error) (string, error) { panic("fallback down") })
	_, err := panicking.Execute(context.Background(), 1)
	h.completion()
	var cmdErr *Error
	require.ErrorAs(t, err, &cmdErr)
	var pe *PanicError
	require.ErrorAs(t, err, &pe, "the fallback's panic")
	assert.Equal(t, "fallback down", pe.Value)
	assert.NotEmpty(t, pe.Stack)

	typed := New("ListUsers", succeedRun, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Faults:    FaultConfig{Enabled: true, ErrorPercentage: 100},
	})).WithFallback(func(context.Context, int, error) (string, error) { return "", &fallbackTypedError{code: 7} })
	_, err = typed.Execute(context.Background(), 1)
	h.completion()
	var fe *fallbackTypedError
	require.ErrorAs(t, err, &fe, "the fallback's typed error")
	assert.Equal(t, 7, fe.code)

	// run's panic (the Cause) is found before the fallback's.
	both := New("Both", func(context.Context, int) (string, error) { panic("run down") }, WithRegistry(h.reg),
		WithConfig(Config{Isolation: SemaphoreIsolation})).
		WithFallback(func(context.Context, int, error) (string, error) { panic("fallback down") })
	_, err = both.Execute(context.Background(), 1)
	h.completion()
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "run down", pe.Value)
}
