package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// The table has a line per command with its rate, error percentage, p99,
// circuit and pool or semaphore use.
func TestTableLinesShowEachCommand(t *testing.T) {
	mc := clock.NewManual(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	reg := command.NewRegistry(command.WithClock(mc))
	defer reg.Close()
	ctx := context.Background()
	slow := command.New("Slow", func(ctx context.Context, ms int) (int, error) {
		if ms == 0 {
			return 0, errors.New("down")
		}
		mc.Advance(time.Duration(ms) * time.Millisecond)
		return ms, nil
	}, command.WithRegistry(reg), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation, Timeout: -1}))
	for _, ms := range []int{20, 20, 40, 0} {
		_, _ = slow.Execute(ctx, ms)
	}
	off := command.New("Off", func(ctx context.Context, n int) (int, error) { return n, nil },
		command.WithRegistry(reg), command.WithConfig(command.Config{Group: "OffService", Breaker: breaker.Config{ForceOpen: true}}))
	_, err := off.Execute(ctx, 1)
	require.ErrorIs(t, err, command.ErrShortCircuited)
	mc.Advance(10 * time.Second) // every bucket closes

	lines := tableLines(reg.Metrics(), 20*time.Second)
	require.Len(t, lines, 4, "%q", lines)
	assert.Equal(t, "rxhystrix demo, 20s in", lines[0])
	assert.Regexp(t, `^COMMAND +REQ/S +ERR% +P99 +CIRCUIT +POOL OR SEMAPHORE IN USE$`, lines[1])
	assert.Regexp(t, `^Off +0\.1 +0% +- +Forced open +pool OffService \(never used\)$`, lines[2])
	assert.Regexp(t, `^Slow +0\.4 +25% +40ms +Closed +semaphore 0/10$`, lines[3])
}

// A command that injects faults says so at the end of its line.
func TestTableShowsACommandInjectingFaults(t *testing.T) {
	mc := clock.NewManual(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	reg := command.NewRegistry(command.WithClock(mc))
	defer reg.Close()
	command.New("Chaos", func(ctx context.Context, n int) (int, error) { return n, nil }, command.WithRegistry(reg),
		command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation, Faults: command.FaultConfig{Enabled: true, ErrorPercentage: 50}}))
	command.New("Calm", func(ctx context.Context, n int) (int, error) { return n, nil }, command.WithRegistry(reg),
		command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation}))
	lines := tableLines(reg.Metrics(), 20*time.Second)
	require.Len(t, lines, 4, "%q", lines)
	assert.Regexp(t, `^Calm +.* semaphore 0/10$`, lines[2])
	assert.Regexp(t, `^Chaos +.* semaphore 0/10, injecting faults$`, lines[3])
}

// A closed circuit whose breaker throttles shows the share it refuses.
func TestTableShowsAThrottlingCircuit(t *testing.T) {
	mc := clock.NewManual(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	reg := command.NewRegistry(command.WithClock(mc))
	defer reg.Close()
	flaky := command.New("Flaky", func(ctx context.Context, n int) (int, error) {
		if n == 0 {
			return 0, errors.New("down")
		}
		return n, nil
	}, command.WithRegistry(reg), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation, Timeout: -1,
		Breaker: breaker.Config{RequestVolumeThreshold: 4, ErrorThresholdPercentage: 100, ThrottleSuccessPercentage: 100, MaxThrottlePercentage: 100}}))
	for _, n := range []int{1, 0, 0, 0} {
		_, _ = flaky.Execute(context.Background(), n)
	}
	mc.Advance(time.Second) // a health snapshot: 1 of 4 succeeded, p = (4 − 1)/5

	lines := tableLines(reg.Metrics(), 20*time.Second)
	require.Len(t, lines, 3, "%q", lines)
	assert.Regexp(t, `^Flaky +[0-9.]+ +75% +\S+ +Throttle 60% +semaphore 0/10$`, lines[2])
}

// The rate counts from the start in the first seconds of the demo.
func TestWindowIsShortAtFirst(t *testing.T) {
	reg := command.NewRegistry()
	defer reg.Close()
	cfg := reg.Metrics().Command("C", metricsstream.Config{}).Config()
	assert.Equal(t, 1.0, window(cfg, 300*time.Millisecond))
	assert.Equal(t, 3.0, window(cfg, 3500*time.Millisecond))
	assert.Equal(t, 10.0, window(cfg, time.Minute))
}

// Run with a terminal as its output, the demo redraws its table in place
// every refresh.
func TestDemoRedrawsTheTableOnATerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	defer ptmx.Close()
	require.NoError(t, pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: 60}))
	read := readAll(ptmx)

	reg := command.NewRegistry()
	defer reg.Close()
	var errOut syncBuffer
	code := demoMain(context.Background(), []string{"-addr", "127.0.0.1:0", "-duration", "2500ms", "-refresh", "500ms"}, tty, &errOut, reg)
	require.Equal(t, 0, code, errOut.String())
	require.NoError(t, tty.Close())
	out := read()

	assert.Contains(t, out, "/hystrix/stream")
	assert.GreaterOrEqual(t, strings.Count(out, "COMMAND"), 3, "a table every 500ms")
	tableHeight := len(demoCommands) + 3 // the title, the header, the commands and the collapser
	assert.GreaterOrEqual(t, strings.Count(out, fmt.Sprintf("\x1b[%dA", tableHeight)), 2, "each table after the first goes back up over the last one")
	assert.Contains(t, out, "\x1b[2KGetUser ")
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "\x1b[2K") {
			assert.LessOrEqual(t, len(strings.TrimSuffix(strings.TrimPrefix(line, "\x1b[2K"), "\r")), 59,
				"a table line fits the 60 columns of the terminal: %q", line)
		}
	}
	assert.Regexp(t, `LegacyInventory +[0-9.]+ +\d+% +\S+ +Forced open`, out)
	assert.Contains(t, out, "stopped")
}

// Run with a pipe as its output, the demo writes plain lines.
func TestDemoWritesPlainLinesToAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	read := readAll(r)

	reg := command.NewRegistry()
	defer reg.Close()
	var errOut syncBuffer
	code := demoMain(context.Background(), []string{"-addr", "127.0.0.1:0", "-duration", "2500ms", "-refresh", "500ms"}, w, &errOut, reg)
	require.Equal(t, 0, code, errOut.String())
	require.NoError(t, w.Close())
	out := read()

	assert.NotContains(t, out, "\x1b[", "no terminal codes")
	assert.GreaterOrEqual(t, strings.Count(out, "\nCOMMAND "), 3)
	assert.Regexp(t, `\nGetUser +[0-9.]+ +\d+% +\S+ +Closed +pool UserService \d+/10\n`, out)
	assert.Regexp(t, `\ncollapser GetPrice +[0-9.]+ batches/s`, out)
}

func TestDemoRefreshFlag(t *testing.T) {
	reg := command.NewRegistry()
	defer reg.Close()
	var out, errOut syncBuffer
	assert.Equal(t, 2, demoMain(context.Background(), []string{"-refresh", "-1s"}, &out, &errOut, reg))
	assert.Contains(t, errOut.String(), "-refresh -1s is negative")

	code := demoMain(context.Background(), []string{"-addr", "127.0.0.1:0", "-duration", "1200ms", "-refresh", "0"}, &out, &errOut, reg)
	assert.Equal(t, 0, code, errOut.String())
	assert.NotContains(t, out.String(), "COMMAND", "-refresh 0 draws no table")
}

// readAll reads r in the background until it ends (EOF, or EIO from a
// pseudo-terminal whose other side closed); call the result for what it
// read.
func readAll(r io.Reader) func() string {
	var b bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(&b, r)
	}()
	return func() string {
		<-done
		return b.String()
	}
}
