package command

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
)

// Do runs a function as a command of a key, with or without a fallback;
// its executions share the key's breaker and metrics with every other
// command of the key.
func TestDo(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()

	require.NoError(t, h.reg.Do(ctx, "Ping", func(ctx context.Context) error { return nil }, nil))
	assert.Equal(t, evs("SUCCESS"), h.events())

	err := h.reg.Do(ctx, "Ping", func(ctx context.Context) error { return errBoom }, nil)
	assertCommandError(t, err, "Ping", CommandFailure, errBoom, ErrFallbackMissing)
	assert.Equal(t, evs("FAILURE", "FALLBACK_MISSING"), h.events())

	var seen error
	err = h.reg.Do(ctx, "Ping", func(ctx context.Context) error { return errBoom }, func(ctx context.Context, err error) error {
		seen = err
		return nil
	})
	require.NoError(t, err)
	assertCommandError(t, seen, "Ping", CommandFailure, errBoom, nil)
	assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), h.events())

	errFallback := errors.New("no cache either")
	err = h.reg.Do(ctx, "Ping", func(ctx context.Context) error { panic("ping broke") }, func(ctx context.Context, err error) error {
		return errFallback
	})
	ce := assertCommandError(t, err, "Ping", CommandFailure, nil, errFallback)
	var pe *PanicError
	assert.ErrorAs(t, ce.Cause, &pe)
	assert.Equal(t, evs("FAILURE", "FALLBACK_FAILURE"), h.events())

	// Do shares the key with the commands made for it.
	require.NoError(t, h.reg.Configure("Ping", Config{Breaker: breaker.Config{ForceOpen: true}}))
	ran := false
	err = h.reg.Do(ctx, "Ping", func(ctx context.Context) error { ran = true; return nil }, nil)
	assert.ErrorIs(t, err, ErrShortCircuited)
	assert.False(t, ran)
	assert.Equal(t, evs("SHORT_CIRCUITED", "FALLBACK_MISSING"), h.events())
	c := New("Ping", succeedRun, WithRegistry(h.reg))
	_, err = c.Execute(ctx, 1)
	assert.ErrorIs(t, err, ErrShortCircuited)
	h.completion()
	h.noMoreCompletions()
}
