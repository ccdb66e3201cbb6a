package browsertest

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// StepTimeout bounds each step of a browser test, so that a page that never
// shows what the test waits for fails the test instead of hanging it.
const StepTimeout = 30 * time.Second

// Do runs actions in tab within StepTimeout and fails t if they fail.
func Do(t testing.TB, tab context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, StepTimeout)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, actions...))
}

// Eval evaluates the JavaScript expression expr in tab within StepTimeout
// and returns its value; it fails t if the evaluation fails.
func Eval[T any](t testing.TB, tab context.Context, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, StepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err, "evaluate %s", expr)
	return v
}
