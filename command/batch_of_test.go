package command

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/observable"
)

type callerKey struct{}

// callerNames are the callerKey values of a batch's callers, as
// "arg:name".
func callerNames(b *Batch) []string {
	var out []string
	for _, c := range b.Callers {
		out = append(out, itoa(c.Arg)+":"+c.Context.Value(callerKey{}).(string))
	}
	return out
}

// The batch command's contexts carry its batch: each caller's context at
// its argument's index, those that share an argument too; the commands
// that the batch function executes see it, under another key.
func TestBatchOfNamesTheCallersOfEachArgument(t *testing.T) {
	for _, tc := range []struct {
		name  string
		scope Scope
		cache bool
	}{
		{"request scope, cache key", RequestScope, true}, // a second caller joins through the request cache
		{"global scope, comparable argument", GlobalScope, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, mc := newManualRegistry(t)
			tr := newRecordingTracer()
			r.SetTracer(tr)
			var inRun, inNested *Batch
			nested := New("Audit", func(ctx context.Context, n int) (int, error) {
				inNested, _ = BatchOf(ctx)
				return n, nil
			}, WithRegistry(r), WithConfig(Config{Isolation: SemaphoreIsolation}))
			c := NewCollapser("GetUser", func(ctx context.Context, ids []int) ([]string, error) {
				inRun, _ = BatchOf(ctx)
				_, err := nested.Execute(ctx, len(ids))
				return make([]string, len(ids)), err
			}, WithRegistry(r), WithCollapserConfig(CollapserConfig{Scope: tc.scope}))
			if tc.cache {
				c = c.WithCacheKey(itoa)
			}
			ctx := WithRequestContext(context.Background())
			callerCtx := func(name string) context.Context { return context.WithValue(ctx, callerKey{}, name) }
			f1 := c.Queue(callerCtx("ann"), 7)
			f2 := c.Queue(callerCtx("bob"), 8)
			f3 := c.Queue(callerCtx("cat"), 7)
			mc.Advance(DefaultCollapserDelay)
			for _, f := range []*observable.Future[string]{f1, f2, f3} {
				_, err := f.Get(ctx)
				require.NoError(t, err)
			}

			require.NotNil(t, inRun, "the batch function's context")
			assert.Equal(t, "GetUser", inRun.Collapser)
			assert.Equal(t, "GetUserBatch", inRun.Command)
			assert.Equal(t, []string{"0:ann", "0:cat", "1:bob"}, callerNames(inRun))
			assert.Same(t, inRun, inNested, "a command the batch function executes")

			traces := map[string]*recordedTrace{}
			for range 2 {
				got := tr.next(t)
				traces[got.key] = got
			}
			require.Contains(t, traces, "GetUserBatch")
			assert.Same(t, inRun, traces["GetUserBatch"].batch, "the tracer's Begin is given it")
		})
	}
}

func TestBatchOfAnotherContext(t *testing.T) {
	b, ok := BatchOf(context.Background())
	assert.Nil(t, b)
	assert.False(t, ok)
}
