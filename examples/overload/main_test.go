package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestGuardsServeWhatTheUnguardedServiceDrops(t *testing.T) {
	var out strings.Builder
	o := options{Cores: 1, Work: 10 * time.Millisecond, Rate: 200, Duration: time.Second, Deadline: 250 * time.Millisecond}
	require.NoError(t, run(&out, o))
	got := out.String()
	t.Log("\n" + got)

	type row struct{ served, refused, gaveUp, p99 float64 }
	parse := func(name string) row {
		t.Helper()
		m := regexp.MustCompile(name + ` +\d+ +(\d+)% +(\d+)% +(\d+)% +\S+ +(\d+)ms\n`).FindStringSubmatch(got)
		require.NotNil(t, m, "a row for %q", name)
		var r row
		for i, f := range []*float64{&r.served, &r.refused, &r.gaveUp, &r.p99} {
			*f, _ = strconv.ParseFloat(m[i+1], 64)
		}
		return r
	}
	unguarded := parse(`unguarded`)
	assert.GreaterOrEqual(t, unguarded.gaveUp, 50.0, "the queue outgrows the clients' deadline")
	assert.Zero(t, unguarded.refused)
	for _, name := range []string{`guard, 2 permits`, `guard, Vegas \(limit \d+ at the end\)`} {
		g := parse(name)
		assert.LessOrEqual(t, g.gaveUp, 10.0, "%s: what is admitted is served in time", name)
		assert.GreaterOrEqual(t, g.refused, 20.0, "%s: the excess is refused", name)
		assert.Greater(t, g.served, unguarded.served, "%s", name)
		assert.Less(t, g.p99, 250.0, "%s", name)
	}

	p50 := func(name string) float64 {
		t.Helper()
		m := regexp.MustCompile(name + ` +\d+ +\d+% +\d+% +\d+% +(\d+)ms`).FindStringSubmatch(got)
		require.NotNil(t, m, "a row for %q with a p50 in milliseconds", name)
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	fifo, lifo := parse(`guard, 2 permits, FIFO backlog of 8`), parse(`guard, 2 permits, LIFO backlog of 8`)
	for name, g := range map[string]row{"FIFO": fifo, "LIFO": lifo} {
		assert.LessOrEqual(t, g.gaveUp, 10.0, "%s: a wait ends before the clients' deadline", name)
		assert.Greater(t, g.served, unguarded.served, "%s", name)
	}
	assert.Less(t, 2*p50(`guard, 2 permits, LIFO backlog of 8`), p50(`guard, 2 permits, FIFO backlog of 8`),
		"the newest waiters served first wait least")

	priorities := func(name string) (live, batch float64) {
		t.Helper()
		m := regexp.MustCompile(name + ` +(\d+)% +(\d+)%\n`).FindStringSubmatch(got)
		require.NotNil(t, m, "a row for %q", name)
		live, _ = strconv.ParseFloat(m[1], 64)
		batch, _ = strconv.ParseFloat(m[2], 64)
		return live, batch
	}
	fixedLive, _ := priorities(`guard, 2 permits`)
	live, batch := priorities(`guard, 2 permits, live guaranteed 2`)
	assert.GreaterOrEqual(t, live, 90.0, "live traffic is served as if alone")
	assert.Greater(t, live, fixedLive+20, "more than a guard that refuses both alike")
	assert.Greater(t, batch, 0.0, "batch jobs have the permits live traffic leaves")
}

func TestRunRejectsBadOptions(t *testing.T) {
	good := options{Cores: 1, Work: time.Millisecond, Rate: 1, Duration: time.Millisecond, Deadline: time.Millisecond}
	for _, tc := range []struct {
		flag string
		bad  func(*options)
	}{
		{"-cores", func(o *options) { o.Cores = 0 }},
		{"-work", func(o *options) { o.Work = 0 }},
		{"-rate", func(o *options) { o.Rate = 0 }},
		// past a request a nanosecond, the pacing ticker's period would
		// be 0, which time.NewTicker panics on
		{"-rate", func(o *options) { o.Rate = 2_000_000_000 }},
		{"-duration", func(o *options) { o.Duration = -time.Second }},
		{"-deadline", func(o *options) { o.Deadline = 0 }},
	} {
		o := good
		tc.bad(&o)
		assert.ErrorContains(t, run(&strings.Builder{}, o), "overload: "+tc.flag+" is ", "%+v", o)
	}
}
