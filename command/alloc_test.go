//go:build !race

package command

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/breaker"
)

// A passing semaphore Execute and a short circuit with no fallback
// allocate nothing: the execution stays on the caller's stack.
func TestExecuteAllocatesNothing(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	constant := func(context.Context, int) (string, error) { return "user", nil }
	plain := New("Plain", constant, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: -1}))
	open := New("Open", constant, WithRegistry(h.reg),
		WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: -1, Breaker: breaker.Config{ForceOpen: true}}))
	h.reg.onCompletion = nil
	for name, c := range map[string]*Command[int, string]{"passing": plain, "short-circuited": open} {
		assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = c.Execute(ctx, 1) }), name)
	}
}
