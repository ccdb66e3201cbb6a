package command

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/observable"
)

// The ways a pool key function fails: it panics, or returns a key that
// cannot name a pool.
var failingPoolKeys = map[string]struct {
	f   func(int) string
	err error // what errors.Is finds in the KeyFuncError, or nil for a panic
}{
	"panic":         {func(int) string { panic("no pool for you") }, nil},
	"empty":         {func(int) string { return "" }, ErrInvalidKey},
	"invalid UTF-8": {func(int) string { return "bad-\xff" }, ErrInvalidKey},
}

// assertKeyFuncError asserts that err is, or wraps, the *KeyFuncError of
// option for key, with want (or a *PanicError when want is nil) as its
// Err.
func assertKeyFuncError(t *testing.T, err error, key, option string, want error) {
	t.Helper()
	var kerr *KeyFuncError
	require.ErrorAs(t, err, &kerr)
	assert.Equal(t, key, kerr.Command)
	assert.Equal(t, option, kerr.Option)
	if want != nil {
		assert.ErrorIs(t, err, want)
		return
	}
	var perr *PanicError
	assert.ErrorAs(t, err, &perr, "a panic is the KeyFuncError's Err")
}

// A pool key function that panics or returns an empty or invalid key
// fails the execution as run would: FAILURE, counted in health, and the
// fallback runs; nothing panics in the caller or on a library goroutine.
func TestPoolKeyFunctionFailureIsTheExecutionsFailure(t *testing.T) {
	for name, pk := range failingPoolKeys {
		t.Run(name, func(t *testing.T) {
			forEachMode(t, func(t *testing.T, h *harness, m execMode) {
				plain := New("keyed", succeedRun, WithRegistry(h.reg)).WithPoolKey(pk.f)
				_, err := m.exec(context.Background(), plain, 1)
				ce := assertCommandError(t, err, "keyed", CommandFailure, nil, ErrFallbackMissing)
				assertKeyFuncError(t, ce.Cause, "keyed", "WithPoolKey", pk.err)
				assert.Equal(t, evs("FAILURE", "FALLBACK_MISSING"), eventNames(h.completion().Events))

				withFallback := New("keyed", succeedRun, WithRegistry(h.reg)).WithPoolKey(pk.f).WithFallback(fallbackName)
				v, err := m.exec(context.Background(), withFallback, 1)
				require.NoError(t, err)
				assert.Equal(t, "anonymous", v)
				assert.Equal(t, evs("FAILURE", "FALLBACK_SUCCESS"), eventNames(h.completion().Events))
				h.assertReleased("keyed")
				assert.Zero(t, h.reg.PoolCount(), "no pool was made for a key that failed")
			})
		})
	}
}

// A half-open trial whose pool key function panics is a failed trial: the
// breaker opens again instead of staying half-open.
func TestPoolKeyPanicInHalfOpenTrialOpensTheBreaker(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		fail := New("trial", failRun, WithRegistry(h.reg),
			WithConfig(Config{Breaker: breaker.Config{RequestVolumeThreshold: 2}}))
		h.openBreaker(func() { _, _ = fail.Execute(context.Background(), 1) }, 2, "trial")
		h.clock.Advance(h.reg.Breaker("trial").Config().SleepWindow + time.Millisecond)

		keyed := New("trial", succeedRun, WithRegistry(h.reg)).WithPoolKey(failingPoolKeys["panic"].f)
		_, err := m.exec(context.Background(), keyed, 1)
		assert.ErrorIs(t, err, ErrFallbackMissing)
		assert.Equal(t, evs("FAILURE", "FALLBACK_MISSING"), eventNames(h.completion().Events))
		assert.Equal(t, breaker.Open, h.reg.Breaker("trial").State())
	})
}

// A cache key function that panics fails the call before the execution
// begins, as an exception in Hystrix's getCacheKey does: the caller gets
// the *KeyFuncError, nothing is recorded, no fallback runs, and Queue's
// Future fails instead of its goroutine panicking.
func TestCacheKeyPanicIsTheCallersError(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		c := New("cached", succeedRun, WithRegistry(h.reg)).WithFallback(fallbackName).WithCacheKey(func(int) string { panic("no key") })
		_, err := m.exec(WithRequestContext(context.Background()), c, 1)
		assertKeyFuncError(t, err, "cached", "WithCacheKey", nil)
		h.noMoreCompletions()
		h.assertReleased("cached")
	})
}

// An ObservableCommand's key functions fail as a Command's do.
func TestObservableCommandKeyFunctionFailures(t *testing.T) {
	h := newHarness(t)
	just := func(_ context.Context, n int) observable.Observable[int] { return observable.Just(n) }
	pooled := NewObservable("obs-keyed", just, WithRegistry(h.reg), WithConfig(Config{Isolation: PoolIsolation})).WithPoolKey(failingPoolKeys["invalid UTF-8"].f)
	_, err := pooled.Execute(context.Background(), 1)
	assertKeyFuncError(t, err, "obs-keyed", "WithPoolKey", ErrInvalidKey)
	assert.Equal(t, evs("FAILURE", "FALLBACK_MISSING"), eventNames(h.completion().Events))

	cached := NewObservable("obs-cached", just, WithRegistry(h.reg)).WithCacheKey(func(int) string { panic("no key") })
	_, err = cached.Execute(WithRequestContext(context.Background()), 1)
	assertKeyFuncError(t, err, "obs-cached", "WithCacheKey", nil)
	h.noMoreCompletions()
}

// A collapser's cache key function that panics fails the request it was
// asked for, which joins no batch.
func TestCollapserCacheKeyPanicIsTheCallersError(t *testing.T) {
	r, _ := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("collapsed", b.getUsers, WithRegistry(r)).WithCacheKey(func(int) string { panic("no key") })
	ctx := WithRequestContext(context.Background())
	_, err := c.Execute(ctx, 1)
	assertKeyFuncError(t, err, "collapsed", "WithCacheKey", nil)
	_, err = c.Queue(ctx, 2).Get(ctx)
	assertKeyFuncError(t, err, "collapsed", "WithCacheKey", nil)
	assert.Empty(t, b.all())
}

// Keys become metric labels and stream fields: a command, collapser or
// pool key that is empty or not valid UTF-8 is refused where it enters,
// with an error (or, from a constructor, a panic) that names it.
func TestInvalidKeysAreRefusedWhereTheyEnter(t *testing.T) {
	r := NewRegistry()
	defer r.Close()
	reg := WithRegistry(r)
	just := func(_ context.Context, n int) observable.Observable[int] { return observable.Just(n) }
	b := &batches{}

	assert.PanicsWithValue(t, `command: New: key "bad-\xff" is not valid UTF-8`,
		func() { New("bad-\xff", succeedRun, reg) })
	assert.PanicsWithValue(t, `command: NewObservable: key "bad-\xff" is not valid UTF-8`,
		func() { NewObservable("bad-\xff", just, reg) })
	assert.PanicsWithValue(t, `command: NewCollapser: key "bad-\xff" is not valid UTF-8`,
		func() { NewCollapser("bad-\xff", b.getUsers, reg) })

	for _, key := range []string{"", "bad-\xff"} {
		err := r.Configure(key, Config{})
		assert.ErrorIs(t, err, ErrInvalidKey, "Configure(%q)", key)
		assert.ErrorContains(t, err, "command: Configure: key")
		err = r.ConfigurePool(key, PoolConfig{})
		assert.ErrorIs(t, err, ErrInvalidKey, "ConfigurePool(%q)", key)
		assert.ErrorContains(t, err, "command: ConfigurePool: pool key")
		ran := false
		err = r.Do(context.Background(), key, func(context.Context) error { ran = true; return nil }, nil)
		assert.ErrorIs(t, err, ErrInvalidKey, "Do(%q)", key)
		assert.False(t, ran, "Do ran nothing for an invalid key")
	}
	assert.ErrorIs(t, Configure("", Config{}), ErrInvalidKey)

	err := Config{Group: "bad-\xff"}.Validate()
	assert.EqualError(t, err, `command: Config.Group: "bad-\xff" is not valid UTF-8`)
	err = Config{Pool: "bad-\xfe"}.Validate()
	assert.EqualError(t, err, `command: Config.Pool: "bad-\xfe" is not valid UTF-8`)
	assert.ErrorIs(t, err, ErrInvalidConfig)
	assert.NotErrorIs(t, err, ErrInvalidKey, "a bad group or pool name is a bad Config, not a bad key")
	assert.Equal(t, 0, r.PoolCount())
	assert.True(t, errors.Is(checkKey("pool key", "\xff"), ErrInvalidKey))
}

// ValidKey says what checkKey refuses, which every entry of a key
// refuses with ErrInvalidKey.
func TestValidKey(t *testing.T) {
	for key, valid := range map[string]bool{"GetUser": true, "api.example.com:8443": true, "é": true, "": false, "\xff": false} {
		assert.Equal(t, valid, ValidKey(key), "%q", key)
		assert.Equal(t, !valid, errors.Is(checkKey("key", key), ErrInvalidKey), "%q", key)
	}
}
