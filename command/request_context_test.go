package command

import (
	"context"
	"errors"
	"testing"

	"github.com/rxhystrix/rxhystrix/observable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The request context itself (its log, cache and collapsers) reaches run
// and the fallback wherever they run: on a pool worker, on the caller's
// goroutine, in an Observable's subscription.
func TestRequestContextIsSharedByRunAndFallback(t *testing.T) {
	for _, isolation := range isolations {
		t.Run(isolation.String(), func(t *testing.T) {
			r, _ := newManualRegistry(t)
			ctx := WithRequestContext(context.Background())
			want := RequestLogFrom(ctx)
			require.NotNil(t, want)
			seen := make(chan *RequestLog, 8)
			c := New("SeesRequest"+isolation.String(), func(ctx context.Context, fail bool) (int, error) {
				seen <- RequestLogFrom(ctx)
				if fail {
					return 0, errors.New("boom")
				}
				return 1, nil
			}, WithRegistry(r), WithConfig(Config{Isolation: isolation})).WithFallback(func(ctx context.Context, _ bool, err error) (int, error) {
				seen <- RequestLogFrom(ctx)
				return 2, nil
			})
			_, err := c.Execute(ctx, false)
			require.NoError(t, err)
			_, err = c.Execute(ctx, true)
			require.NoError(t, err)
			_, err = c.Queue(ctx, true).Get(ctx)
			require.NoError(t, err)
			_, err = c.ToObservable(ctx, false).Last(context.Background())
			require.NoError(t, err)
			for range 6 {
				assert.Same(t, want, <-seen)
			}
			assert.Equal(t, 4, want.Len())

			// The request context of an execution is the one of the
			// context given to ToObservable: a subscriber's context with
			// another one reaches run, but the execution is not logged
			// there.
			_, err = c.ToObservable(context.Background(), false).Last(ctx)
			require.NoError(t, err)
			assert.Same(t, want, <-seen)
			assert.Equal(t, 4, want.Len())
		})
	}
}

func TestWithRequestContext(t *testing.T) {
	assert.PanicsWithValue(t, "command: WithRequestContext with nil ctx", func() {
		_ = WithRequestContext(nil) //nolint:staticcheck // the panic is the point
	})
	outer := WithRequestContext(context.Background())
	inner := WithRequestContext(outer)
	assert.NotSame(t, RequestLogFrom(outer), RequestLogFrom(inner), "each call starts a new request context")

	// The log stays readable once the request context has ended.
	r, _ := newManualRegistry(t)
	ctx, cancel := context.WithCancel(context.Background())
	ctx = WithRequestContext(ctx)
	c := NewObservable("AfterEnd", func(ctx context.Context, n int) observable.Observable[int] { return observable.Just(n) }, WithRegistry(r))
	_, err := c.Execute(ctx, 1)
	require.NoError(t, err)
	cancel()
	assert.Equal(t, "AfterEnd[EMIT, SUCCESS][0ms]", RequestLogFrom(ctx).String())
}
