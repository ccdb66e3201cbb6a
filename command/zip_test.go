package command

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// Zip2 of two pool-isolated commands: each records its own SUCCESS, and
// the pair is the zip's value; when the second fails, the first ends
// CANCELLED, whether it had started (the starter hands it a goroutine if
// the second takes long) or not, and the zip fails with the second's
// error.
func TestZip2OfPoolCommands(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.reg.ConfigurePool("Users", PoolConfig{CoreSize: 2}))
	ran := make(chan string, 2)
	cfg := WithConfig(Config{Pool: "Users", Timeout: time.Second})
	a := New("A", func(ctx context.Context, id int) (string, error) {
		ran <- "A"
		if id == 2 {
			<-ctx.Done() // until the zip ends it
			return "", ctx.Err()
		}
		return userName(id), nil
	}, WithRegistry(h.reg), cfg)
	b := New("B", func(ctx context.Context, id int) (string, error) {
		ran <- "B"
		if id < 0 {
			return "", errBoom
		}
		return "ok", nil
	}, WithRegistry(h.reg), cfg)
	ctx := context.Background()
	pair := func(x, y string) string { return x + "+" + y }

	v, err := observable.Zip2(a.ToObservable(ctx, 1), b.ToObservable(ctx, 1), pair).First(ctx)
	require.NoError(t, err)
	assert.Equal(t, userName(1)+"+ok", v)
	for range 2 {
		done := h.completion()
		assert.Equal(t, evs("SUCCESS"), eventNames(done.Events), done.CommandKey)
	}
	assert.ElementsMatch(t, []string{"A", "B"}, []string{<-ran, <-ran})

	_, err = observable.Zip2(a.ToObservable(ctx, 2), b.ToObservable(ctx, -1), pair).First(ctx)
	assertCommandError(t, err, "B", CommandFailure, errBoom, ErrFallbackMissing)
	byKey := map[string]metricsstream.Completion{}
	for range 2 {
		done := h.completion()
		byKey[done.CommandKey] = done
	}
	assert.Equal(t, evs("FAILURE", "FALLBACK_MISSING"), eventNames(byKey["B"].Events))
	assert.Equal(t, evs("CANCELLED"), eventNames(byKey["A"].Events))
	h.noMoreCompletions()
}
