package command

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/limit"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// partitionedConfig is a key of 4 permits of which "live" is guaranteed
// half and "batch" a quarter.
func partitionedConfig() Config {
	return Config{Isolation: SemaphoreIsolation, MaxConcurrentRequests: 4, Timeout: -1,
		Partitions: []Partition{{Name: "live", Share: 0.5}, {Name: "batch", Share: 0.25}}}
}

// newPartitioned returns a command of h of partitionedConfig whose runs
// wait in a gate, which opens when the test ends if not before.
func newPartitioned(t *testing.T, h *harness) (*Command[int, string], *gate) {
	g := newGate()
	t.Cleanup(g.release)
	return New("Partitioned", g.runLate, WithRegistry(h.reg), WithConfig(partitionedConfig())), g
}

// holdIn starts n executions of c in partition (none if "") that block in
// g, and waits until they run.
func holdIn(t *testing.T, c *Command[int, string], g *gate, partition string, n int) []<-chan callResult[string] {
	t.Helper()
	ctx := context.Background()
	if partition != "" {
		ctx = WithPartition(ctx, partition)
	}
	var calls []<-chan callResult[string]
	for range n {
		calls = append(calls, goCall(func() (string, error) { return c.Execute(ctx, 1) }))
		g.arrived(t)
	}
	return calls
}

// partitionsOf returns the partitions of key's status by name.
func partitionsOf(t *testing.T, c *Command[int, string]) map[string]metricsstream.PartitionStatus {
	t.Helper()
	st, ok := c.Metrics().Status()
	require.True(t, ok)
	out := map[string]metricsstream.PartitionStatus{}
	for _, p := range st.Partitions {
		out[p.Name] = p
	}
	return out
}

// A partition borrows the permits the others leave idle; at the limit,
// only a partition below its guarantee is admitted, beyond the limit, and
// an execution that names no partition is refused.
func TestPartitionsGuaranteeTheirShareAtTheLimit(t *testing.T) {
	forEachMode(t, func(t *testing.T, h *harness, m execMode) {
		c, g := newPartitioned(t, h)

		held := holdIn(t, c, g, "batch", 4) // all the permits: batch borrows live's and the rest
		assert.Equal(t, int64(4), h.execPermits("Partitioned"))

		for _, name := range []string{"batch", "", "unknown"} {
			_, err := m.exec(WithPartition(context.Background(), name), c, 1)
			assert.ErrorIs(t, err, ErrSemaphoreRejected, "partition %q at the limit", name)
		}
		held = append(held, holdIn(t, c, g, "live", 2)...) // live's guarantee, beyond the limit
		assert.Equal(t, int64(6), h.execPermits("Partitioned"))
		_, err := m.exec(WithPartition(context.Background(), "live"), c, 1)
		assert.ErrorIs(t, err, ErrSemaphoreRejected, "live holds its guarantee")

		ps := partitionsOf(t, c)
		assert.Equal(t, metricsstream.PartitionStatus{Name: "live", Share: 0.5, Guaranteed: 2, InFlight: 2, Rejected: 1}, ps["live"])
		assert.Equal(t, metricsstream.PartitionStatus{Name: "batch", Share: 0.25, Guaranteed: 1, InFlight: 4, Rejected: 1}, ps["batch"])

		g.release()
		for _, call := range held {
			assert.Equal(t, "late", awaitCall(t, call).v)
		}
		ps = partitionsOf(t, c)
		assert.Zero(t, ps["live"].InFlight)
		assert.Zero(t, ps["batch"].InFlight)
		h.assertReleased("Partitioned")
	})
}

// Below the limit a partition's guarantee is no cap: one partition may
// take every permit.
func TestPartitionBorrowsIdlePermits(t *testing.T) {
	h := newHarness(t)
	c, g := newPartitioned(t, h)
	held := holdIn(t, c, g, "live", 4)
	assert.Equal(t, int64(4), partitionsOf(t, c)["live"].InFlight)
	_, err := c.Execute(WithPartition(context.Background(), "live"), 1)
	assert.ErrorIs(t, err, ErrSemaphoreRejected, "4 of live hold more than its 2")
	held = append(held, holdIn(t, c, g, "batch", 1)...) // batch holds none of its 1
	assert.Equal(t, int64(5), h.execPermits("Partitioned"))
	g.release()
	for _, call := range held {
		awaitCall(t, call)
	}
	h.assertReleased("Partitioned")
}

// The subscriber's context names the partition; the caller's does when
// the subscriber's names none, as for every value a run looks up.
func TestPartitionOfTheSubscriberThenTheCaller(t *testing.T) {
	for _, m := range twoContextModes {
		t.Run(m.name, func(t *testing.T) {
			h := newHarness(t)
			c, g := newPartitioned(t, h)
			held := holdIn(t, c, g, "batch", 4)
			live := WithPartition(context.Background(), "live")
			batch := WithPartition(context.Background(), "batch")

			_, err := m.exec(c, batch, context.Background())
			assert.ErrorIs(t, err, ErrSemaphoreRejected, "the caller's batch")
			_, err = m.exec(c, live, batch)
			assert.ErrorIs(t, err, ErrSemaphoreRejected, "the subscriber's batch before the caller's live")

			g.release()
			_, err = m.exec(c, batch, live) // admitted: the gate is open
			require.NoError(t, err)
			assert.Equal(t, uint64(2), partitionsOf(t, c)["batch"].Rejected)
			for _, call := range held {
				awaitCall(t, call)
			}
			h.assertReleased("Partitioned")
		})
	}
}

// Configure changes the partitions live: an execution gives its permit
// back to the partition that admitted it, a partition no longer named
// guarantees nothing, and one named again has its counts.
func TestConfigurePartitionsLive(t *testing.T) {
	h := newHarness(t)
	c, g := newPartitioned(t, h)
	held := holdIn(t, c, g, "batch", 3)
	held = append(held, holdIn(t, c, g, "live", 1)...)

	onlyBatch := partitionedConfig()
	onlyBatch.Partitions = []Partition{{Name: "batch", Share: 0.75}}
	require.NoError(t, h.reg.Configure("Partitioned", onlyBatch))
	ps := partitionsOf(t, c)
	require.Len(t, ps, 1)
	assert.Equal(t, metricsstream.PartitionStatus{Name: "batch", Share: 0.75, Guaranteed: 3, InFlight: 3}, ps["batch"])
	_, err := c.Execute(WithPartition(context.Background(), "live"), 1)
	assert.ErrorIs(t, err, ErrSemaphoreRejected, "live is guaranteed nothing now")

	g.release()
	for _, call := range held {
		awaitCall(t, call)
	}
	require.NoError(t, h.reg.Configure("Partitioned", partitionedConfig()))
	assert.Equal(t, metricsstream.PartitionStatus{Name: "live", Share: 0.5, Guaranteed: 2}, partitionsOf(t, c)["live"],
		"the live execution admitted before gave its permit back to live")
	h.assertReleased("Partitioned")

	require.NoError(t, h.reg.Configure("Partitioned", Config{Isolation: SemaphoreIsolation}))
	st, _ := c.Metrics().Status()
	assert.Nil(t, st.Partitions)
}

// A key keeps every partition name it has had, up to MaxPartitions: a
// Configure past that fails and changes nothing.
func TestConfigurePastMaxPartitions(t *testing.T) {
	h := newHarness(t)
	c := New("Partitioned", succeedRun, WithRegistry(h.reg), WithConfig(partitionedConfig()))
	for i := range MaxPartitions - 2 {
		cfg := partitionedConfig()
		cfg.Partitions = []Partition{{Name: strings.Repeat("p", i+1), Share: 0.1}}
		require.NoError(t, h.reg.Configure("Partitioned", cfg), "name %d", i)
	}
	cfg := partitionedConfig()
	cfg.Partitions = []Partition{{Name: "one too many", Share: 0.1}}
	err := h.reg.Configure("Partitioned", cfg)
	assert.ErrorIs(t, err, ErrInvalidConfig)
	assert.ErrorContains(t, err, `key "Partitioned" would have had 256 partition names, more than MaxPartitions (255)`)
	ps := partitionsOf(t, c)
	require.Len(t, ps, 1, "the last Config holds")
	assert.Contains(t, ps, strings.Repeat("p", MaxPartitions-2))
}

// An adaptive limit's partitions are guaranteed their share of its limit.
func TestPartitionsOfAnAdaptiveLimit(t *testing.T) {
	h := newHarness(t)
	cfg := partitionedConfig()
	cfg.AdaptiveLimit = limit.AIMD{InitialLimit: 10, MinLimit: 1}
	c := New("Partitioned", succeedRun, WithRegistry(h.reg), WithConfig(cfg))
	ps := partitionsOf(t, c)
	assert.Equal(t, 5, ps["live"].Guaranteed)
	assert.Equal(t, 3, ps["batch"].Guaranteed, "⌈10 × 0.25⌉")
}

func TestPartitionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name       string
		isolation  Isolation
		partitions []Partition
		want       string
	}{
		{"pool", PoolIsolation, []Partition{{"a", 1}}, "Config.Partitions: need Isolation SemaphoreIsolation, not THREAD: a pool's workers are not partitioned"},
		{"default", DefaultIsolation, []Partition{{"a", 1}}, "Config.Partitions: need Isolation SemaphoreIsolation, not DEFAULT: a pool's workers are not partitioned"},
		{"empty name", SemaphoreIsolation, []Partition{{"a", 0.5}, {"", 0.5}}, "Config.Partitions[1].Name: is empty"},
		{"bad UTF-8", SemaphoreIsolation, []Partition{{"\xff", 0.5}}, `Config.Partitions[0].Name: "\xff" is not valid UTF-8`},
		{"same name", SemaphoreIsolation, []Partition{{"a", 0.25}, {"b", 0.25}, {"a", 0.25}}, `Config.Partitions[2].Name: "a" is also Partitions[0]'s`},
		{"zero share", SemaphoreIsolation, []Partition{{"a", 0}}, "Config.Partitions[0].Share: 0 is not in (0, 1]"},
		{"negative share", SemaphoreIsolation, []Partition{{"a", -0.5}}, "Config.Partitions[0].Share: -0.5 is not in (0, 1]"},
		{"share over 1", SemaphoreIsolation, []Partition{{"a", 1.5}}, "Config.Partitions[0].Share: 1.5 is not in (0, 1]"},
		{"NaN share", SemaphoreIsolation, []Partition{{"a", math.NaN()}}, "Config.Partitions[0].Share: NaN is not in (0, 1]"},
		{"sum over 1", SemaphoreIsolation, []Partition{{"a", 0.5}, {"b", 0.6}}, "Config.Partitions: the shares add up to 1.1, more than 1"},
		{"too many", SemaphoreIsolation, manyPartitions(MaxPartitions + 1), "Config.Partitions: 256 partitions, more than MaxPartitions (255)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Config{Isolation: tc.isolation, Partitions: tc.partitions}.Validate()
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrInvalidConfig))
			assert.Equal(t, "command: "+tc.want, err.Error())
		})
	}
	for _, ok := range [][]Partition{nil, {{"a", 1}}, {{"a", 0.1}, {"b", 0.2}, {"c", 0.7}}, manyPartitions(MaxPartitions)} {
		assert.NoError(t, Config{Isolation: SemaphoreIsolation, Partitions: ok}.Validate())
	}
}

// manyPartitions returns n partitions whose shares add up to less than 1.
func manyPartitions(n int) []Partition {
	ps := make([]Partition, n)
	for i := range ps {
		ps[i] = Partition{Name: strings.Repeat("x", i+1), Share: 0.001}
	}
	return ps
}

func TestWithPartition(t *testing.T) {
	ctx := context.Background()
	assert.Equal(t, "", PartitionFrom(ctx))
	live := WithPartition(ctx, "live")
	assert.Equal(t, "live", PartitionFrom(live))
	inner, cancel := context.WithCancel(live)
	defer cancel()
	assert.Equal(t, "live", PartitionFrom(inner), "a derived context names it too")
	assert.Equal(t, "batch", PartitionFrom(WithPartition(inner, "batch")), "the innermost name")
}

// A partition is guaranteed ⌈permits × Share⌉ as the decimal Share reads,
// not as its binary rounding multiplies out: of 100 permits, 0.07 is 7
// and 0.93 is 93, so that shares adding up to 1 guarantee no more than
// the permits.
func TestPartitionGuaranteeIsTheDecimalShare(t *testing.T) {
	h := newHarness(t)
	c := New("Rounded", func(context.Context, int) (string, error) { return "", nil }, WithRegistry(h.reg),
		WithConfig(Config{Isolation: SemaphoreIsolation, MaxConcurrentRequests: 100, Timeout: -1,
			Partitions: []Partition{{Name: "live", Share: 0.07}, {Name: "batch", Share: 0.93}}}))
	_, err := c.Execute(context.Background(), 1)
	require.NoError(t, err)
	ps := partitionsOf(t, c)
	assert.Equal(t, 7, ps["live"].Guaranteed, "⌈100 × 0.07⌉")
	assert.Equal(t, 93, ps["batch"].Guaranteed, "⌈100 × 0.93⌉")
	for _, tc := range []struct {
		permits int64
		share   float64
		want    int64
	}{{100, 0.07, 7}, {100, 0.14, 14}, {100, 0.28, 28}, {100, 0.55, 55}, {10, 0.3, 3}, {10, 0.25, 3}, {3, 0.5, 2}, {1, 0.01, 1}} {
		assert.Equal(t, tc.want, guaranteed(tc.permits, tc.share), "⌈%d × %v⌉", tc.permits, tc.share)
	}
}
