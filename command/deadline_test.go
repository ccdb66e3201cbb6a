package command

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run's context carries the timeout as its deadline whichever way the
// command is executed, so that run can pass it on to the calls it makes.
func TestRunSeesTheTimeoutAsItsDeadline(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		var deadline time.Time
		var ok bool
		c := New("Deadline", func(ctx context.Context, id int) (string, error) {
			deadline, ok = ctx.Deadline()
			return userName(id), nil
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: 700 * time.Millisecond}))
		v, err := m.exec(context.Background(), c, 1)
		require.NoError(t, err)
		assert.Equal(t, userName(1), v)
		h.completion()
		require.True(t, ok, "run's context has no deadline")
		assert.WithinDuration(t, harnessStart.Add(700*time.Millisecond), deadline, 0, "the same instant")
	})
}
