package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/command"
)

// With -hystrix-properties the commands take Hystrix's properties over
// their code's Configs, and the file's new properties when it changes; a
// file that does not parse stops the demo, naming the property.
func TestDemoReadsHystrixProperties(t *testing.T) {
	file := filepath.Join(t.TempDir(), "hystrix.properties")
	write := func(text string, at time.Time) {
		t.Helper()
		require.NoError(t, os.WriteFile(file, []byte(text), 0o600))
		require.NoError(t, os.Chtimes(file, at, at))
	}
	now := time.Now()
	write("hystrix.command.GetUser.circuitBreaker.forceOpen=true\n"+
		"hystrix.command.LegacyInventory.circuitBreaker.forceOpen=false\n", now.Add(-time.Hour))
	reg := command.NewRegistry()
	defer reg.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- demoMain(ctx, []string{"-addr", "127.0.0.1:0", "-refresh", "0", "-hystrix-properties", file}, &out, &errOut, reg)
	}()
	forced := func(key string) (open, ok bool) {
		b := reg.Breaker(key)
		if b == nil {
			return false, false
		}
		return b.Config().ForceOpen, true
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); runtime.Gosched() {
			require.False(t, time.Now().After(deadline), "%s; %s", what, errOut.String())
		}
	}
	waitUntil("GetUser forced open by its property", func() bool { open, ok := forced("GetUser"); return ok && open })
	waitUntil("LegacyInventory made", func() bool { _, ok := forced("LegacyInventory"); return ok })
	open, _ := forced("LegacyInventory")
	assert.False(t, open, "the property beats the code's ForceOpen")
	assert.Contains(t, out.String(), "Hystrix's properties are read from "+file)

	write("hystrix.command.GetUser.circuitBreaker.forceOpen=false\n", now)
	waitUntil("GetUser closed by the changed file", func() bool { open, _ := forced("GetUser"); return !open })
	waitUntil("LegacyInventory's property gone: the code's ForceOpen again", func() bool { open, _ := forced("LegacyInventory"); return open })
	cancel()
	assert.Equal(t, 0, <-done, errOut.String())

	write("hystrix.command.GetUser.circuitBreaker.forceOpne=true\n", now)
	bad := command.NewRegistry()
	defer bad.Close()
	var badOut, badErr syncBuffer
	assert.Equal(t, 1, demoMain(context.Background(), []string{"-addr", "127.0.0.1:0", "-hystrix-properties", file}, &badOut, &badErr, bad))
	assert.Contains(t, badErr.String(), "hystrix.command.GetUser.circuitBreaker.forceOpne: no such property")
}
