package command

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/observable"
)

// Every entry point reads a nil context as context.Background, as package
// observable does; Execute and Do used to dereference it.
func TestNilContextMeansBackground(t *testing.T) {
	var nilCtx context.Context
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			c := New("nil-ctx", succeedRun, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))
			calls := map[string]func() (string, error){
				"Execute":            func() (string, error) { return c.Execute(nilCtx, 1) },
				"ToObservable.First": func() (string, error) { return c.ToObservable(nilCtx, 1).First(nilCtx) },
				"Queue.Get":          func() (string, error) { return c.Queue(nilCtx, 1).Get(nilCtx) },
				"Observe.Last":       func() (string, error) { return c.Observe(nilCtx, 1).Last(nilCtx) },
			}
			for name, call := range calls {
				v, err := call()
				require.NoError(t, err, name)
				assert.Equal(t, userName(1), v, name)
				assert.Equal(t, evs("SUCCESS"), eventNames(h.completion().Events), name)
			}

			ran := false
			require.NoError(t, h.reg.Do(nilCtx, "nil-do", func(ctx context.Context) error {
				ran = ctx != nil
				return nil
			}, nil))
			assert.True(t, ran, "Do's run gets a context")
			h.completion()
		})
	}

	h := newHarness(t)
	oc := NewObservable("nil-obs", func(_ context.Context, n int) observable.Observable[int] {
		return observable.Just(n, n+1)
	}, WithRegistry(h.reg))
	vs, err := oc.Execute(nilCtx, 1)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, vs)
	vs, err = oc.Queue(nilCtx, 1).Get(nilCtx)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, vs)

	r, mc := newManualRegistry(t)
	b := &batches{}
	col := NewCollapser("nil-collapser", b.getUsers, WithRegistry(r),
		WithCollapserConfig(CollapserConfig{Scope: GlobalScope}))
	f := col.Queue(nilCtx, 7)
	mc.Advance(DefaultCollapserDelay)
	v, err := f.Get(nilCtx)
	require.NoError(t, err)
	assert.Equal(t, "user7", v)
}
