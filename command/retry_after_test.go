package command

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRetryAfterOfARateLimitIsTheNextToken(t *testing.T) {
	h := newHarness(t)
	c := New("Limited", succeedRun, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		RateLimit: RateLimitConfig{Enabled: true, Rate: 10, Burst: 1},
	}))
	_, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	h.completion()
	_, err = c.Execute(context.Background(), 1)
	require.ErrorIs(t, err, ErrRateLimited)
	h.completion()

	assertRetryAfter(t, h.reg, err, 100*time.Millisecond, true, "the next token, an interval after the first")
	h.clock.Advance(40 * time.Millisecond)
	assertRetryAfter(t, h.reg, fmt.Errorf("served: %w", err), 60*time.Millisecond, true, "found through a wrapper, 40ms later")
	h.clock.Advance(time.Second)
	assertRetryAfter(t, h.reg, err, 0, true, "a token is there: at once")

	require.NoError(t, h.reg.Configure("Limited", Config{Isolation: SemaphoreIsolation}))
	assertRetryAfter(t, h.reg, err, 0, false, "the limit is off now")
}

func TestRetryAfterOfAShortCircuitIsTheRestOfTheSleepWindow(t *testing.T) {
	h := newHarness(t)
	c := New("GetUser", failRun, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Breaker: tripAfterThree}))
	h.openBreaker(func() { c.Execute(context.Background(), 1) }, 3, "GetUser")
	_, err := c.Execute(context.Background(), 1)
	require.ErrorIs(t, err, ErrShortCircuited)
	h.completion()

	cfg, _ := h.reg.Config("GetUser")
	assertRetryAfter(t, h.reg, err, cfg.Breaker.SleepWindow, true, "just opened: the whole window")
	h.clock.Advance(cfg.Breaker.SleepWindow / 4)
	assertRetryAfter(t, h.reg, err, cfg.Breaker.SleepWindow*3/4, true, "the rest of it")
}

func TestRetryAfterKnowsNothingOfOtherErrors(t *testing.T) {
	h := newHarness(t)
	c := New("Busy", succeedRun, WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, MaxConcurrentRequests: 1}))
	started, release := make(chan struct{}), make(chan struct{})
	hold := New("Busy", func(ctx context.Context, id int) (string, error) {
		close(started)
		<-release
		return "", nil
	}, WithRegistry(h.reg))
	held := goCall(func() (string, error) { return hold.Execute(context.Background(), 1) })
	<-started
	_, rejected := c.Execute(context.Background(), 1)
	require.ErrorIs(t, rejected, ErrSemaphoreRejected)
	close(release)
	<-held

	for _, tc := range []struct {
		name string
		err  error
	}{
		{"a rejection by the permits: when one frees is not known", rejected},
		{"run's own failure", &Error{Command: "Busy", Failure: CommandFailure, Cause: errBoom}},
		{"an error that is not a command's", errors.New("boom")},
		{"nil", nil},
		{"a key the registry does not know", &Error{Command: "Unknown", Failure: ShortCircuitFailure, Cause: ErrShortCircuited}},
	} {
		assertRetryAfter(t, h.reg, tc.err, 0, false, tc.name)
	}
}

func assertRetryAfter(t *testing.T, r *Registry, err error, want time.Duration, wantOK bool, msg string) {
	t.Helper()
	got, ok := r.RetryAfter(err)
	assert.Equal(t, wantOK, ok, msg)
	assert.Equal(t, want, got, msg)
}
