package faultmark

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/command"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Any mark read back from its text names the same keys.
func TestMarkReadsBackValue(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keys := rapid.SliceOf(rapid.StringMatching(`[^\x00]{1,12}`).Filter(command.ValidKey)).Draw(t, "keys")
		v, marked := Value(command.WithFaultInjection(context.Background(), keys...))
		require.True(t, marked)
		ctx, err := Mark(context.Background(), []string{v})
		require.NoError(t, err)
		got, marked := command.FaultInjectionOf(ctx)
		require.True(t, marked)
		if len(keys) == 0 {
			keys = nil
		}
		require.Equal(t, keys, got)
	})
}

func TestMark(t *testing.T) {
	bg := context.Background()
	ctx, err := Mark(bg, nil)
	require.NoError(t, err)
	assert.Equal(t, bg, ctx, "no values: not marked")
	_, ok := Value(bg)
	assert.False(t, ok)

	ctx, err = Mark(bg, []string{"a, b", "c"})
	require.NoError(t, err)
	keys, _ := command.FaultInjectionOf(ctx)
	assert.Equal(t, []string{"a", "b", "c"}, keys, "values and parts together")

	v, _ := Value(command.WithFaultInjection(bg, "*", "a*"))
	assert.Equal(t, "%2A,a%2A", v, "a key * is not every key")

	ctx, err = Mark(bg, []string{"a", "*"})
	require.NoError(t, err)
	keys, marked := command.FaultInjectionOf(ctx)
	assert.True(t, marked)
	assert.Empty(t, keys, "* wins")

	for _, bad := range []string{"", "a,,b", "%zz", "%FF"} {
		_, err := Mark(bg, []string{bad})
		assert.Error(t, err, "%q", bad)
	}
}

// A part that is neither * nor an escaped key is refused wherever it
// stands: after a * as before one.
func TestMarkRefusesABadPartAfterStar(t *testing.T) {
	bg := context.Background()
	for _, values := range [][]string{{"%zz,*"}, {"*,%zz"}, {"*", "%zz"}, {"*", ""}} {
		_, err := Mark(bg, values)
		assert.ErrorContains(t, err, "is not a command key", "%q", values)
	}
}
