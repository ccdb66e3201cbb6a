package keyedcommand

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newSet(t *testing.T) *Set[string, string] {
	r := command.NewRegistry(command.WithClock(clock.NewManual(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))))
	t.Cleanup(r.Close)
	return &Set[string, string]{
		Package:  "client",
		Registry: r,
		Run:      func(_ context.Context, in string) (string, error) { return "run " + in, nil },
	}
}

func TestGetMakesEachKeyOnceWithItsConfig(t *testing.T) {
	s := newSet(t)
	var configs, poolConfigs []string
	s.Config = func(key string) command.Config {
		configs = append(configs, key)
		if key == "own-pool" {
			return command.Config{Pool: "shared"}
		}
		return command.Config{}
	}
	s.PoolConfig = func(key string) command.PoolConfig {
		poolConfigs = append(poolConfigs, key)
		return command.PoolConfig{CoreSize: 3}
	}
	a, err := s.Get("a", "downstream-a")
	require.NoError(t, err)
	again, err := s.Get("a", "downstream-b")
	require.NoError(t, err)
	assert.Same(t, a, again, "one command per key")
	_, err = s.Get("own-pool", "downstream-c")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "own-pool"}, configs, "read once per key")
	assert.Equal(t, []string{"a", "own-pool"}, poolConfigs)

	cfg, _ := s.Registry.Config("a")
	assert.Equal(t, "downstream-a", cfg.Pool, "the pool of the key's first use")
	cfg, _ = s.Registry.Config("own-pool")
	assert.Equal(t, "shared", cfg.Pool, "a Config's own pool holds")

	out, err := a.Execute(context.Background(), "x")
	require.NoError(t, err)
	assert.Equal(t, "run x", out)
}

func TestGetFallback(t *testing.T) {
	s := newSet(t)
	s.Run = func(context.Context, string) (string, error) { return "", assert.AnError }
	s.Fallback = func(_ context.Context, in string, err error) (string, error) {
		assert.ErrorIs(t, err, assert.AnError)
		return "fallback " + in, nil
	}
	c, err := s.Get("a", "pool")
	require.NoError(t, err)
	out, err := c.Execute(context.Background(), "x")
	require.NoError(t, err)
	assert.Equal(t, "fallback x", out)
}

func TestGetRefusesABadConfig(t *testing.T) {
	s := newSet(t)
	s.Config = func(string) command.Config { return command.Config{Timeout: 0, MaxConcurrentRequests: -1} }
	_, err := s.Get("a", "pool")
	assert.ErrorIs(t, err, command.ErrInvalidConfig)
	assert.ErrorContains(t, err, `client: config of "a": `)

	s = newSet(t)
	s.PoolConfig = func(string) command.PoolConfig { return command.PoolConfig{CoreSize: -1} }
	_, err = s.Get("a", "pool")
	assert.ErrorIs(t, err, command.ErrInvalidConfig)
	assert.ErrorContains(t, err, `client: pool config of "a": `)
	_, ok := s.Registry.Config("a")
	assert.False(t, ok, "no command is made for a key whose config is refused")
}

func TestGetWithoutRegistryUsesTheDefault(t *testing.T) {
	s := &Set[string, string]{Package: "client", Run: func(_ context.Context, in string) (string, error) { return in, nil }}
	const key = "keyedcommand-default-registry"
	_, err := s.Get(key, "pool")
	require.NoError(t, err)
	_, ok := command.DefaultRegistry.Config(key)
	assert.True(t, ok, "made in command.DefaultRegistry")
}

func TestLogText(t *testing.T) {
	assert.Equal(t, "", LogText(context.Background()), "no request context")
	ctx := command.WithRequestContext(context.Background())
	assert.Equal(t, "", LogText(ctx), "nothing logged")
	r := command.NewRegistry(command.WithClock(clock.NewManual(time.Unix(0, 0))))
	defer r.Close()
	for _, key := range []string{"GetUser", "Get\tUser\x7f", "Bücher 100%"} {
		c := command.New(key, func(context.Context, int) (int, error) { return 1, nil },
			command.WithRegistry(r), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation}))
		_, err := c.Execute(ctx, 0)
		require.NoError(t, err)
	}
	assert.Equal(t, "GetUser[SUCCESS][0ms], Get%09User%7F[SUCCESS][0ms], B%C3%BCcher 100%25[SUCCESS][0ms]", LogText(ctx))
}

// A key already made is returned while another key's Config is being
// read: the first use of a new key (a Config that reads a remote source,
// say) must not stall every call of the keys already in use.
func TestGetOfAKnownKeyDoesNotWaitForANewKeysConfig(t *testing.T) {
	s := newSet(t)
	entered, release := make(chan struct{}), make(chan struct{})
	s.Config = func(key string) command.Config {
		if key == "slow" {
			close(entered)
			<-release
		}
		return command.Config{}
	}
	a, err := s.Get("a", "pool")
	require.NoError(t, err)
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		_, err := s.Get("slow", "pool")
		assert.NoError(t, err)
	}()
	<-entered
	got := make(chan *command.Command[string, string], 1)
	go func() {
		c, _ := s.Get("a", "pool")
		got <- c
	}()
	select {
	case c := <-got:
		assert.Same(t, a, c)
	case <-time.After(10 * time.Second):
		t.Error("Get of a known key waited for another key's Config")
	}
	close(release)
	<-slowDone
}

// Keys that share a pool (grpccommand's methods of one endpoint) do not
// configure it again at each one's first use: a pool's configuration,
// changed live since (Registry.ConfigurePool), holds.
func TestGetConfiguresASharedPoolOnce(t *testing.T) {
	s := newSet(t)
	s.PoolConfig = func(string) command.PoolConfig { return command.PoolConfig{CoreSize: 3} }
	a, err := s.Get("a", "shared")
	require.NoError(t, err)
	_, err = a.Execute(context.Background(), "x") // makes the pool
	require.NoError(t, err)
	require.NoError(t, s.Registry.ConfigurePool("shared", command.PoolConfig{CoreSize: 7})) // live
	b, err := s.Get("b", "shared")
	require.NoError(t, err)
	_, err = b.Execute(context.Background(), "x")
	require.NoError(t, err)
	pm, ok := s.Registry.Metrics().LookupPool("shared")
	require.True(t, ok)
	st, ok := pm.Status()
	require.True(t, ok)
	assert.Equal(t, 7, st.CoreSize, "the live change holds")
}
