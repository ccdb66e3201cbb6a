package hystrixprops

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

func succeed(ctx context.Context, id int) (string, error) { return "Ada", nil }

// Set resolves every key configured through the Source again: a new
// property is in force, one removed falls back to the code's value, and
// what an operator set stays.
func TestSetPutsNewPropertiesInForceForEveryKey(t *testing.T) {
	r := command.NewRegistry()
	defer r.Close()
	s := NewSource(r, mustFromMap(t, map[string]string{
		"hystrix.command.GetUser.execution.isolation.thread.timeoutInMilliseconds": "300",
	}))
	userCode := command.Config{Isolation: command.SemaphoreIsolation, Timeout: 500 * time.Millisecond}
	command.New("GetUser", succeed, command.WithRegistry(r), command.WithConfig(s.Command("GetUser", userCode)))
	command.New("GetOrder", succeed, command.WithRegistry(r), command.WithConfig(s.Command("GetOrder", command.Config{})))
	require.NoError(t, s.ConfigurePool("Users", command.PoolConfig{CoreSize: 4}))
	timeout := func(key string) time.Duration {
		cfg, _ := r.Config(key)
		return cfg.Timeout
	}
	assert.Equal(t, 300*time.Millisecond, timeout("GetUser"))
	require.NoError(t, r.ConfigureFunc("GetUser", func(cfg *command.Config) {
		cfg.Faults = command.FaultConfig{Enabled: true, ErrorPercentage: 5}
	}))

	next := mustFromMap(t, map[string]string{
		"hystrix.command.default.execution.isolation.thread.timeoutInMilliseconds": "2000",
		"hystrix.threadpool.Users.coreSize":                                        "6",
	})
	require.NoError(t, s.Set(next))
	assert.Same(t, next, s.Properties())
	assert.Equal(t, 500*time.Millisecond, timeout("GetUser"), "the key's property gone: the code's value")
	assert.Equal(t, 2*time.Second, timeout("GetOrder"), "the new default")
	cfg, _ := r.Config("GetUser")
	assert.Equal(t, 5.0, cfg.Faults.ErrorPercentage, "the operator's faults stay")
	listUsers := command.New("ListUsers", succeed, command.WithRegistry(r), command.WithConfig(command.Config{Pool: "Users"}))
	_, err := listUsers.Execute(context.Background(), 1)
	require.NoError(t, err)
	st, _ := r.Metrics().Pool("Users", metricsstream.Config{}).Status()
	assert.Equal(t, 6, st.CoreSize)
}

// A key that new properties make invalid keeps its Config, and Set names
// it; the other keys take the properties.
func TestSetNamesTheKeysItCannotConfigure(t *testing.T) {
	r := command.NewRegistry()
	defer r.Close()
	s := NewSource(r, nil)
	growing := command.Config{Breaker: breaker.Config{MaxSleepWindow: 30 * time.Second}}
	command.New("GetUser", succeed, command.WithRegistry(r), command.WithConfig(s.Command("GetUser", growing)))
	command.New("GetOrder", succeed, command.WithRegistry(r), command.WithConfig(s.Command("GetOrder", command.Config{})))
	err := s.Set(mustFromMap(t, map[string]string{"hystrix.command.default.circuitBreaker.sleepWindowInMilliseconds": "60000"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "command GetUser: ")
	assert.Contains(t, err.Error(), "MaxSleepWindow")
	assert.NotContains(t, err.Error(), "GetOrder")
	assert.Equal(t, 5*time.Second, r.Breaker("GetUser").Config().SleepWindow, "kept")
	assert.Equal(t, 60*time.Second, r.Breaker("GetOrder").Config().SleepWindow)
}

// PollFile reads the file at once and again every interval, puts it in
// force when it changed, and reports a file it cannot read once per
// change, keeping the properties before.
func TestPollFileFollowsTheFile(t *testing.T) {
	mc, s, threshold := polledGetUser(t)
	file := filepath.Join(t.TempDir(), "hystrix.properties")
	epoch := time.Now().Add(-time.Hour)
	write := func(text string, s int) {
		t.Helper()
		require.NoError(t, os.WriteFile(file, []byte(text), 0o600))
		at := epoch.Add(time.Duration(s) * time.Second)
		require.NoError(t, os.Chtimes(file, at, at))
	}
	write("hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage=25\n", 0)

	p := startPoller(t, mc, func(ctx context.Context, report func(error)) error {
		return s.PollFile(ctx, file, time.Minute, report)
	})
	poll, reported := p.next, p.reported
	poll() // the first read is at once, before the timer is armed
	assert.Equal(t, 25, threshold())

	write("hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage=30\n", 1)
	poll()
	assert.Equal(t, 30, threshold())

	write("hystrix.command.GetUser.circuitBreaker.errorThresholdPercent=35\n", 2)
	poll()
	poll()
	assert.Equal(t, 30, threshold(), "the properties before stay in force")
	require.Len(t, reported(), 1, "reported once: %v", reported())
	assert.True(t, strings.HasPrefix(reported()[0], file+": hystrixprops: bad property hystrix.command.GetUser.circuitBreaker.errorThresholdPercent: no such property"), reported()[0])

	require.NoError(t, os.Remove(file))
	poll()
	poll()
	assert.Equal(t, 30, threshold())
	require.Len(t, reported(), 2, "reported once more: %v", reported())
	assert.Contains(t, reported()[1], "no such file or directory; the properties before stay in force")

	assert.ErrorIs(t, p.stop(), context.Canceled)
	assert.EqualError(t, s.PollFile(context.Background(), file, 0, nil), "hystrixprops: PollFile: interval 0s is not positive")
}

// PollFile reads the file at once whatever its modification time, the
// Unix epoch included, which reproducible builds (ko, SOURCE_DATE_EPOCH=0)
// give the files of an image.
func TestPollFileReadsAFileOfTheEpochAtOnce(t *testing.T) {
	mc, s, threshold := polledGetUser(t)
	file := filepath.Join(t.TempDir(), "hystrix.properties")
	require.NoError(t, os.WriteFile(file, []byte("hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage=25\n"), 0o600))
	require.NoError(t, os.Chtimes(file, time.Unix(0, 0), time.Unix(0, 0)))

	p := startPoller(t, mc, func(ctx context.Context, report func(error)) error {
		return s.PollFile(ctx, file, time.Minute, report)
	})
	p.next()
	assert.Equal(t, 25, threshold())
	assert.Empty(t, p.reported())
	assert.ErrorIs(t, p.stop(), context.Canceled)
}

// A file replaced by another of the same modification time is a change:
// the files of a reproducible build (Nix's store, ko, Bazel) all have the
// same one, and a deployment swaps the file (or the symlink to it) for
// the next build's, as rsync -t does (a file renamed over it).
func TestPollFileSeesAFileReplacedWithTheSameModificationTime(t *testing.T) {
	mc, s, threshold := polledGetUser(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "hystrix.properties")
	built := time.Unix(1, 0) // Nix's store
	replace := func(text string) {
		t.Helper()
		next := filepath.Join(dir, "next")
		require.NoError(t, os.WriteFile(next, []byte(text), 0o600))
		require.NoError(t, os.Chtimes(next, built, built))
		require.NoError(t, os.Rename(next, file))
	}
	replace("hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage=25\n")

	p := startPoller(t, mc, func(ctx context.Context, report func(error)) error {
		return s.PollFile(ctx, file, time.Minute, report)
	})
	p.next()
	assert.Equal(t, 25, threshold())

	replace("hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage=30\n")
	p.next()
	assert.Equal(t, 30, threshold(), "the new file, of the same time and size")
	assert.Empty(t, p.reported())
	assert.ErrorIs(t, p.stop(), context.Canceled)
}

// A file overwritten in place by one of the same size and modification
// time is a change: cp -p (which truncates and writes the file that is
// there, and gives it the source's time) of one reproducible build's
// file over another's (Nix's store: all of time 1) keeps the file, its
// size and its time. Archaius reads its file at every poll.
func TestPollFileSeesAFileOverwrittenInPlaceWithTheSameTimeAndSize(t *testing.T) {
	mc, s, threshold := polledGetUser(t)
	file := filepath.Join(t.TempDir(), "hystrix.properties")
	built := time.Unix(1, 0)
	copyKeepingTime := func(text string) { // as cp -p
		t.Helper()
		require.NoError(t, os.WriteFile(file, []byte(text), 0o600))
		require.NoError(t, os.Chtimes(file, built, built))
	}
	copyKeepingTime("hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage=25\n")

	p := startPoller(t, mc, func(ctx context.Context, report func(error)) error {
		return s.PollFile(ctx, file, time.Minute, report)
	})
	p.next()
	assert.Equal(t, 25, threshold())

	copyKeepingTime("hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage=30\n")
	p.next()
	assert.Equal(t, 30, threshold(), "the file's new properties")
	p.next()
	assert.Empty(t, p.reported())
	assert.ErrorIs(t, p.stop(), context.Canceled)
}
