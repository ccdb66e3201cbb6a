package hystrix

import (
	"encoding/json"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestConfigureCommand(t *testing.T) {
	cases := []struct {
		name string
		cfg  CommandConfig
		want Settings
	}{
		{"zero takes the defaults", CommandConfig{}, Settings{
			Timeout: time.Second, MaxConcurrentRequests: 10, RequestVolumeThreshold: 20,
			SleepWindow: 5 * time.Second, ErrorPercentThreshold: 50}},
		{"milliseconds", CommandConfig{Timeout: 10000, MaxConcurrentRequests: 3, RequestVolumeThreshold: 7,
			SleepWindow: 250, ErrorPercentThreshold: 25}, Settings{
			Timeout: 10 * time.Second, MaxConcurrentRequests: 3, RequestVolumeThreshold: 7,
			SleepWindow: 250 * time.Millisecond, ErrorPercentThreshold: 25}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, _ := testEngine(t)
			ConfigureCommand("cfg", c.cfg)
			got := GetCircuitSettings()["cfg"]
			if got == nil || *got != c.want {
				t.Fatalf("GetCircuitSettings()[cfg] = %+v; want %+v", got, c.want)
			}
			rc, ok := e.reg.Config(keyOf("cfg"))
			if !ok {
				t.Fatal("the command key has no configuration")
			}
			if rc.Timeout != c.want.Timeout || rc.MaxConcurrentRequests != c.want.MaxConcurrentRequests ||
				rc.Breaker.SleepWindow != c.want.SleepWindow || rc.Breaker.RequestVolumeThreshold != int(c.want.RequestVolumeThreshold) ||
				rc.Breaker.ErrorThresholdPercentage != c.want.ErrorPercentThreshold || rc.Pool != "cfg" {
				t.Fatalf("command config = %+v; want it to follow %+v in a pool of its own", rc, c.want)
			}
		})
	}
}

func TestDefaultsReadAtCallTime(t *testing.T) {
	testEngine(t)
	old := DefaultMaxConcurrent
	DefaultMaxConcurrent = 3
	defer func() { DefaultMaxConcurrent = old }()
	ConfigureCommand("a", CommandConfig{})
	DefaultMaxConcurrent = old
	if got := GetCircuitSettings()["a"].MaxConcurrentRequests; got != 3 {
		t.Fatalf("MaxConcurrentRequests = %d; want the default when ConfigureCommand was called, 3", got)
	}
}

func TestConfigureAndLiveChange(t *testing.T) {
	e, _ := testEngine(t)
	Configure(map[string]CommandConfig{"x": {Timeout: 10}, "y": {Timeout: 20}})
	s := GetCircuitSettings()
	if len(s) != 2 || s["x"].Timeout != 10*time.Millisecond || s["y"].Timeout != 20*time.Millisecond {
		t.Fatalf("GetCircuitSettings = %v; want x 10ms, y 20ms", s)
	}
	s["x"].Timeout = time.Hour // a copy
	if GetCircuitSettings()["x"].Timeout != 10*time.Millisecond {
		t.Fatal("GetCircuitSettings returned the stored settings, not a copy")
	}
	if err := Do("x", func() error { return nil }, nil); err != nil {
		t.Fatal(err)
	}
	ConfigureCommand("x", CommandConfig{Timeout: 30})
	if rc, _ := e.reg.Config("x"); rc.Timeout != 30*time.Millisecond {
		t.Fatalf("live Timeout = %v; want 30ms", rc.Timeout)
	}
}

func TestConfigureRefusedIsLogged(t *testing.T) {
	testEngine(t)
	var l capture
	SetLogger(&l)
	defer SetLogger(DefaultLogger)
	ConfigureCommand("bad", CommandConfig{MaxConcurrentRequests: -1}) // hystrix-go panics on it
	if l.n == 0 {
		t.Fatal("a refused configuration was not logged")
	}
	if _, ok := GetCircuitSettings()["bad"]; ok {
		t.Fatal("a refused configuration was stored")
	}
	NoopLogger{}.Printf("%d", 1)
}

// What hystrix-go takes without a word is taken, meaning what it means
// there: a threshold over 100 never trips (the circuit is forced closed,
// and the rest of the configuration applies), and a negative timeout or
// sleep window is none at all.
func TestConfigureTakesWhatHystrixGoTakes(t *testing.T) {
	e, _ := testEngine(t)
	ConfigureCommand("never", CommandConfig{Timeout: 5000, MaxConcurrentRequests: 50, ErrorPercentThreshold: 101, SleepWindow: -1})
	_ = Do("never", func() error { return nil }, nil)
	cfg, ok := e.reg.Config("never")
	if !ok {
		t.Fatal("the configuration was not applied")
	}
	if cfg.Timeout != 5*time.Second || cfg.MaxConcurrentRequests != 50 || !cfg.Breaker.ForceClosed || cfg.Breaker.SleepWindow != time.Nanosecond {
		t.Fatalf("in force: timeout %v, %d permits, forced closed %v, sleep window %v; want 5s, 50, true, 1ns",
			cfg.Timeout, cfg.MaxConcurrentRequests, cfg.Breaker.ForceClosed, cfg.Breaker.SleepWindow)
	}
	if s := GetCircuitSettings()["never"]; s == nil || s.ErrorPercentThreshold != 101 {
		t.Fatalf("settings %+v, want them as given", s)
	}
	ConfigureCommand("instant", CommandConfig{Timeout: -1})
	_ = Do("instant", func() error { return nil }, nil)
	if cfg, _ := e.reg.Config("instant"); cfg.Timeout != time.Nanosecond {
		t.Fatalf("a negative timeout is %v in force, want 1ns: every command times out at once", cfg.Timeout)
	}
}

type capture struct{ n int }

func (c *capture) Printf(string, ...interface{}) { c.n++ }

func TestCommandConfigJSON(t *testing.T) {
	var c CommandConfig
	in := `{"timeout":1,"max_concurrent_requests":2,"request_volume_threshold":3,"sleep_window":4,"error_percent_threshold":5}`
	if err := json.Unmarshal([]byte(in), &c); err != nil {
		t.Fatal(err)
	}
	if want := (CommandConfig{1, 2, 3, 4, 5}); !reflect.DeepEqual(c, want) {
		t.Fatalf("decoded %+v; want %+v", c, want)
	}
}

// poolCoreSize runs one command of name, so that its pool exists, and
// returns the pool's size.
func poolCoreSize(t *testing.T, e *engine, name string) int {
	t.Helper()
	if err := Do(name, func() error { return nil }, nil); err != nil {
		t.Fatal(err)
	}
	p, ok := e.reg.Metrics().LookupPool(keyOf(name))
	if !ok {
		t.Fatalf("no pool for %q", name)
	}
	return p.Snapshot().Status.CoreSize
}

// A ConfigureCommand racing a name's first use must leave the pool the
// size the settings say, whichever comes first.
func TestConfigureRacingFirstUseKeepsPoolSize(t *testing.T) {
	var spin atomic.Int64
	for i := range 2000 {
		e, _, restore := swapEngine()
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Add(2)
		go func() { defer wg.Done(); <-start; GetCircuit("race") }()
		go func() {
			defer wg.Done()
			<-start
			for range i % 400 { // scans the offsets between the two
				spin.Add(1)
			}
			ConfigureCommand("race", CommandConfig{MaxConcurrentRequests: 3})
		}()
		close(start)
		wg.Wait()
		want := GetCircuitSettings()["race"].MaxConcurrentRequests
		got := poolCoreSize(t, e, "race")
		restore()
		if got != want {
			t.Fatalf("iteration %d: pool size %d; settings say %d", i, got, want)
		}
	}
}
