package fleet

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
)

const (
	key      = "GetUser"
	interval = 500 * time.Millisecond // the default health snapshot interval
	// settle is how long a test waits, in real time, for an exchange it
	// knows is due; reaching it fails the test.
	settle = 10 * time.Second
)

// epoch starts the manual clocks, on a bucket boundary.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// tripConfig trips on 20 requests with half of them failing, and lets a
// trial through 5s after opening; the window is Hystrix's 10s of 500ms
// health buckets.
var tripConfig = command.Config{
	Isolation: command.SemaphoreIsolation,
	Breaker: breaker.Config{
		RequestVolumeThreshold:   20,
		ErrorThresholdPercentage: 50,
		SleepWindow:              5 * time.Second,
	},
}

var errDown = errors.New("downstream is down")

// instance is one service instance: a registry whose key judges on the
// fleet, and the command of the key.
type instance struct {
	name  string
	clk   *clock.Manual
	fleet *Fleet
	reg   *command.Registry
	cmd   *command.Command[int, int]
	down  atomic.Bool // the downstream fails for this instance
}

// cluster is a fleet of instances in one process, which the test moves
// through time together.
type cluster struct {
	t         *testing.T
	instances []*instance
	exchanged chan *Source
}

func newCluster(t *testing.T) *cluster {
	return &cluster{t: t, exchanged: make(chan *Source, 256)}
}

// add starts an instance on clk that meets the others through s.
func (c *cluster) add(name string, clk *clock.Manual, s store) *instance {
	c.t.Helper()
	return c.addWith(name, clk, s, func(*Config) {})
}

// addWith is add with a Config that change has changed.
func (c *cluster) addWith(name string, clk *clock.Manual, s store, change func(*Config)) *instance {
	c.t.Helper()
	cfg := Config{Instance: name, Keys: []string{key}}
	change(&cfg)
	cfg = cfg.withDefaults()
	f := newFleet(cfg, s)
	f.afterExchange = func(s *Source) { c.exchanged <- s }
	in := &instance{name: name, clk: clk, fleet: f}
	in.reg = command.NewRegistry(command.WithClock(clk), command.WithHealthSource(f.HealthSource))
	in.cmd = command.New(key, func(context.Context, int) (int, error) {
		if in.down.Load() {
			return 0, errDown
		}
		return 1, nil
	}, command.WithRegistry(in.reg), command.WithConfig(tripConfig))
	require.NoError(c.t, in.reg.Configure(key, tripConfig)) // makes the key, and its source
	c.t.Cleanup(func() {
		in.reg.Close()
		f.Close()
	})
	c.instances = append(c.instances, in)
	return in
}

// run executes n commands on in and returns how many failed.
func (in *instance) run(n int) (failed int) {
	for range n {
		if _, err := in.cmd.Execute(context.Background(), 1); err != nil {
			failed++
		}
	}
	return failed
}

func (in *instance) open() bool { return in.cmd.Breaker().IsOpen() }

func (in *instance) source() *Source { return in.fleet.Source(key) }

// tick moves every live instance's clock one health interval on and waits
// until each of their sources has exchanged once.
func (c *cluster) tick() {
	c.t.Helper()
	live := 0
	for _, in := range c.instances {
		if !in.stopped() {
			live++
		}
		in.clk.Advance(interval)
	}
	for range live {
		select {
		case <-c.exchanged:
		case <-time.After(settle):
			c.t.Fatal("a source did not exchange after its tick")
		}
	}
}

// tickInOrder moves the live instances' clocks one interval on, one
// after the other, each exchanging before the next moves, as instances
// that exchange at different moments of the interval do; then it runs
// between.
func (c *cluster) tickInOrder(between func()) {
	c.t.Helper()
	for _, in := range c.instances {
		if in.stopped() {
			continue
		}
		in.clk.Advance(interval)
		select {
		case <-c.exchanged:
		case <-time.After(settle):
			c.t.Fatal("a source did not exchange after its tick")
		}
	}
	between()
}

// ticks ticks n times.
func (c *cluster) ticks(n int) {
	c.t.Helper()
	for range n {
		c.tick()
	}
}

// stopped reports whether in's fleet is closed.
func (in *instance) stopped() bool {
	in.fleet.mu.Lock()
	defer in.fleet.mu.Unlock()
	return in.fleet.closed
}

// stop stops in as a process that exits would: its sources end and it
// writes nothing more.
func (in *instance) stop() {
	in.reg.Close()
	in.fleet.Close()
}

func timeDuration(n int) time.Duration { return time.Duration(n) }

// badOpensAlone runs a window of steady traffic on a and big, then fails
// 25 of bad's calls: bad opens, alone, and a stays closed. It returns the
// traffic, for the intervals that follow. bad exchanges first in each
// interval.
func badOpensAlone(t *testing.T, c *cluster, bad, a, big *instance) (traffic func()) {
	t.Helper()
	traffic = func() { a.run(1); big.run(10) }
	traffic()
	for range 20 { // a window of steady traffic
		c.tickInOrder(traffic)
	}
	bad.down.Store(true)
	bad.run(25) // bad's own fault: it opens alone
	c.tickInOrder(traffic)
	c.tickInOrder(traffic)
	require.True(t, bad.open())
	require.False(t, a.open(), "25 errors in the fleet's ~235 do not trip a")
	return traffic
}
