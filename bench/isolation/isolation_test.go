package isolation

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFarmServersAnswerOrHang(t *testing.T) {
	farm, err := StartFarm(1, 1, time.Millisecond)
	require.NoError(t, err)
	defer farm.Close()
	require.Len(t, farm.URLs, 2)
	for _, u := range farm.URLs {
		assert.True(t, strings.HasPrefix(u, "http://127.0.0.1:"), "server not on 127.0.0.1: %s", u)
	}
	c := newHTTPClient()
	defer c.CloseIdleConnections()

	assert.NoError(t, get(context.Background(), c, farm.URLs[1]), "healthy server")

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = get(ctx, c, farm.URLs[0])
	assert.ErrorIs(t, err, context.DeadlineExceeded, "hung server answered")
}

func TestFarmCloseEndsHungCalls(t *testing.T) {
	farm, err := StartFarm(0, 1, time.Millisecond)
	require.NoError(t, err)
	c := newHTTPClient()
	defer c.CloseIdleConnections()
	done := make(chan error, 1)
	go func() { done <- get(context.Background(), c, farm.URLs[0]) }()
	require.Eventually(t, func() bool { return farm.HungConnections() == 1 }, time.Second, time.Millisecond)
	farm.Close()
	assert.Error(t, <-done)
	assert.Equal(t, 0, farm.HungConnections())
}

func TestPercentile(t *testing.T) {
	ms := func(vs ...int) []time.Duration {
		out := make([]time.Duration, len(vs))
		for i, v := range vs {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	cases := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one", ms(7), 0.99, 7 * time.Millisecond},
		{"median of four", ms(1, 2, 3, 4), 0.5, 2 * time.Millisecond},
		{"p99 of hundred", ms(hundred...), 0.99, 99 * time.Millisecond},
		{"p50 of hundred", ms(hundred...), 0.50, 50 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, percentile(c.sorted, c.p))
		})
	}
}

func TestConfigRejectsBadFields(t *testing.T) {
	for _, c := range []struct {
		field string
		cfg   Config
	}{
		{"Rate", Config{Rate: -1}},
		{"Hung", Config{Servers: 3, Hung: 4}},
		{"Capacity", Config{Capacity: -5}},
		{"Deadline", Config{Deadline: -time.Second}},
	} {
		_, err := Run(context.Background(), c.cfg, Kinds()[0])
		assert.ErrorContains(t, err, "Config."+c.field)
	}
}

// small is a run of 0.3 s in which one hung server of three fills a
// service of two places unless the client isolates it.
var small = Config{
	Servers:  3,
	Hung:     1,
	Rate:     100,
	Duration: 300 * time.Millisecond,
	Latency:  time.Millisecond,
	Capacity: 2,
	Deadline: 100 * time.Millisecond,
	PoolSize: 1,
}

func kind(t *testing.T, name string) ClientKind {
	for _, k := range Kinds() {
		if k.Name == name {
			return k
		}
	}
	t.Fatalf("no client kind %q", name)
	return ClientKind{}
}

// TestHungServerFillsUnprotectedService checks the model on a small run:
// the hung server takes both places of an unprotected service, so most
// requests for healthy servers time out, while a client that lets the hung
// server hold one place at most answers all of them.
func TestHungServerFillsUnprotectedService(t *testing.T) {
	unprotected, err := Run(context.Background(), small, kind(t, "unprotected"))
	require.NoError(t, err)
	protected, err := Run(context.Background(), small, kind(t, "hystrix-go"))
	require.NoError(t, err)

	require.Equal(t, 20, unprotected.Healthy)
	require.Equal(t, 20, protected.Healthy)
	assert.Less(t, unprotected.SuccessRate(), 0.5)
	assert.Equal(t, small.Deadline, unprotected.P99.Round(10*time.Millisecond))
	assert.Equal(t, 2, unprotected.HungConnections)
	assert.GreaterOrEqual(t, protected.SuccessRate(), 0.9)
	assert.LessOrEqual(t, protected.HungConnections, small.PoolSize)
}

func TestRunStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	cfg := small
	cfg.Duration = time.Hour
	_, err := Run(ctx, cfg, kind(t, "unprotected"))
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "got %v", err)
}

// TestSeed002 runs the seed's scenario for 2 s a run with every client
// kind, at a load that makes the unprotected service collapse within the
// first second. It is skipped unless RXHYSTRIX_ISOLATION is set.
func TestSeed002(t *testing.T) {
	if os.Getenv("RXHYSTRIX_ISOLATION") == "" {
		t.Skip("set RXHYSTRIX_ISOLATION=1 to run the 2 s isolation scenario")
	}
	cfg := Config{Rate: 300, Duration: 2 * time.Second, Capacity: 10, PoolSize: 2, Deadline: 500 * time.Millisecond}
	var results []Result
	for _, hung := range []int{0, 1} {
		for _, k := range Kinds() {
			c := cfg
			c.Hung = hung
			r, err := Run(context.Background(), c, k)
			require.NoError(t, err)
			results = append(results, r)
			switch {
			case hung == 0, k.Name != "unprotected":
				assert.GreaterOrEqual(t, r.SuccessRate(), 0.95, "%s, %s", k.Name, Scenario(c))
			default:
				assert.Less(t, r.SuccessRate(), 0.75, "%s, %s", k.Name, Scenario(c))
			}
		}
	}
	var table strings.Builder
	require.NoError(t, WriteMarkdown(&table, results))
	t.Log("\n" + table.String())
}
