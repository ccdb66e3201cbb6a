package command

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A timeout too large for its deadline to be represented (start plus
// timeout past what an int64 of nanoseconds holds) is a deadline that
// never comes: the run is not timed out at once, nor after hours. The
// deadline used to wrap round into the past, and every call of a key
// configured with math.MaxInt64 timed out at once.
func TestHugeTimeoutNeverFiresEarly(t *testing.T) {
	timeouts := map[string]time.Duration{
		"MaxInt64":  math.MaxInt64,
		"250 years": 250 * 365 * 24 * time.Hour,
	}
	for name, timeout := range timeouts {
		for _, cancellable := range []bool{false, true} {
			t.Run(name+ctxName(cancellable), func(t *testing.T) {
				forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
					g := newGate()
					defer g.release()
					c := New("huge", func(ctx context.Context, id int) (string, error) {
						if err := g.wait(ctx, true); err != nil {
							return "", err
						}
						return userName(id), nil
					}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: timeout}))
					ctx := context.Background()
					if cancellable {
						var cancel context.CancelFunc
						ctx, cancel = context.WithCancel(ctx)
						defer cancel()
					}
					call := goCall(func() (string, error) { return m.exec(ctx, c, 3) })
					runCtx := g.arrived(t)
					require.NoError(t, runCtx.Err(), "run's context is not done at the start")
					h.clock.Advance(time.Hour)
					notReturned(t, call)
					require.NoError(t, runCtx.Err(), "run's context is not done an hour later")
					g.release()
					res := awaitCall(t, call)
					require.NoError(t, res.err)
					assert.Equal(t, userName(3), res.v)
					assert.Equal(t, evs("SUCCESS"), eventNames(h.completion().Events))
					h.assertReleased("huge")
				})
			})
		}
	}
}

func ctxName(cancellable bool) string {
	if cancellable {
		return "/cancellable context"
	}
	return "/background context"
}
