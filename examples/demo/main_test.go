package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// failAfter bounds each wait of these tests for the live demo to reach a
// state, so that a broken demo fails instead of hanging. The demo runs on
// the real clock; the waits end as soon as the state is reached.
const failAfter = 30 * time.Second

// demoCommands are the commands the demo runs.
var demoCommands = []string{"CheckoutAPI", "CheckoutClient", "GetPriceBatch", "GetRecommendations", "GetUser", "LegacyInventory", "PaymentGateway", "SearchProducts"}

// fastScenario makes PaymentGateway fail from the start for 2s, once, with
// a 1s sleep window, so its circuit opens and closes again within seconds.
var fastScenario = scenario{paymentFailFor: 2 * time.Second, paymentCycle: time.Hour, sleepWindow: time.Second}

// liveDemo is the demo running on a free port with a registry of its own.
type liveDemo struct {
	base string // http://127.0.0.1:port
	out  *syncBuffer
	stop func() error
}

func startDemo(t *testing.T, sc scenario) *liveDemo {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	reg := command.NewRegistry()
	ctx, cancel := context.WithCancel(context.Background())
	d := &liveDemo{base: "http://" + ln.Addr().String(), out: &syncBuffer{}}
	done := make(chan error, 1)
	go func() { done <- run(ctx, ln, reg, sc, d.out, display{}) }()
	var once sync.Once
	var runErr error
	d.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(failAfter):
				t.Error("the demo did not stop")
			}
			reg.Close()
		})
		return runErr
	}
	t.Cleanup(func() { d.stop() })
	return d
}

// syncBuffer is a bytes.Buffer that the demo writes while a test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// streamObject is the part of a Hystrix stream object the tests read.
type streamObject struct {
	Type                          string
	Name                          string
	IsCircuitBreakerOpen          bool
	RollingCountSuccess           int64
	RollingCountShortCircuited    int64
	RollingCountCommandRejections int64
	RollingCountBatches           int64
	RollingCountRequestsBatched   int64
	RollingCountRateLimited       int64
	RollingCountRetried           int64
	ForceOpen                     bool `json:"propertyValue_circuitBreakerForceOpen"`
	// CircuitBreakerThrottlePercentage is rxhystrix's own field, as are
	// the two of the faults.
	CircuitBreakerThrottlePercentage float64
	FaultInjectionEnabled            bool
	CumulativeCountFaultErrors       int64
}

// readStream reads the demo's stream until seen returns true for the
// objects read so far in a frame, or fails the test after failAfter.
func readStream(t *testing.T, url string, seen func(frame map[string]streamObject) bool) {
	t.Helper()
	sc, disconnect := openStream(t, url)
	defer disconnect()
	frame := map[string]streamObject{}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "data: "):
			var o streamObject
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &o))
			frame[o.Type+" "+o.Name] = o
		case line == "ping: ":
			if seen(frame) {
				return
			}
			frame = map[string]streamObject{}
		}
	}
	t.Fatalf("the stream ended before the demo reached the state the test waits for: %v", sc.Err())
}

// openStream connects to the event stream at url, checks that it is one,
// and returns a scanner of its lines and the function that disconnects.
// The connection gives up after failAfter.
func openStream(t *testing.T, url string) (*bufio.Scanner, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		require.NoError(t, err)
	}
	disconnect := func() {
		resp.Body.Close()
		cancel()
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream;charset=UTF-8" {
		disconnect()
		t.Fatalf("%s: %s, Content-Type %q: not an event stream", url, resp.Status, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	return sc, disconnect
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func TestDemoServesStreamDashboardAndMetrics(t *testing.T) {
	d := startDemo(t, defaultScenario)

	// Every command is in the stream, the forced-open one open, and the
	// healthy one's successes counted once a rolling bucket has closed.
	readStream(t, d.base+"/hystrix/stream", func(f map[string]streamObject) bool {
		for _, c := range demoCommands {
			if _, ok := f["HystrixCommand "+c]; !ok {
				return false
			}
		}
		inv := f["HystrixCommand LegacyInventory"]
		return inv.IsCircuitBreakerOpen && inv.ForceOpen && inv.RollingCountShortCircuited > 0 &&
			f["HystrixCommand GetUser"].RollingCountSuccess > 0 &&
			f["HystrixThreadPool UserService"].Type != "" &&
			f["HystrixCollapser GetPrice"].RollingCountBatches > 0 &&
			f["HystrixCollapser GetPrice"].RollingCountRequestsBatched >= f["HystrixCollapser GetPrice"].RollingCountBatches
	})

	out := d.out.String()
	assert.Contains(t, out, d.base+"/hystrix/", "the demo prints its URLs")
	assert.Contains(t, out, d.base+"/hystrix/stream")
	assert.Contains(t, out, d.base+"/metrics")

	code, page := get(t, d.base+"/hystrix/")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, page, "dashboard.js")

	code, metrics := get(t, d.base+"/metrics")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, metrics, `rxhystrix_command_circuit_open{command="LegacyInventory",group="InventoryService"} 1`)
	assert.Contains(t, metrics, `rxhystrix_command_events_total{command="GetUser",event="SUCCESS",group="UserService"}`)
	assert.Contains(t, metrics, `rxhystrix_pool_executed_total{pool="SearchService"}`)
	assert.Contains(t, metrics, `rxhystrix_collapser_events_total{collapser="GetPrice",event="BATCH_EXECUTED"}`)

	code, health := get(t, d.base+"/health")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, health, `"status":"CIRCUIT_OPEN"`)
	assert.Contains(t, health, `"InventoryService::LegacyInventory"`)

	code, _ = get(t, d.base+"/")
	assert.Equal(t, http.StatusOK, code, "/ leads to the dashboard")

	// A game day: every GetUser call fails by an injected fault, which
	// the stream counts and the health names, until it is turned off.
	req, err := http.NewRequest(http.MethodPut, d.base+"/faults?command=GetUser", strings.NewReader(`{"enabled":true,"errorPercentage":100}`))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	readStream(t, d.base+"/hystrix/stream", func(f map[string]streamObject) bool {
		u := f["HystrixCommand GetUser"]
		return u.FaultInjectionEnabled && u.CumulativeCountFaultErrors > 0
	})
	code, health = get(t, d.base+"/health")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, health, `"injectingFaults":["UserService::GetUser"]`)
	req, err = http.NewRequest(http.MethodDelete, d.base+"/faults?command=GetUser", nil)
	require.NoError(t, err)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	_, health = get(t, d.base+"/health")
	assert.NotContains(t, health, "injectingFaults")

	require.NoError(t, d.stop())
	assert.Contains(t, d.out.String(), "stopped")
}

func TestDemoCircuitOpensAndCloses(t *testing.T) {
	d := startDemo(t, fastScenario)
	opened := false
	readStream(t, d.base+"/hystrix/stream", func(f map[string]streamObject) bool {
		p, ok := f["HystrixCommand PaymentGateway"]
		if !ok {
			return false
		}
		if p.IsCircuitBreakerOpen {
			opened = true
		}
		return opened && !p.IsCircuitBreakerOpen
	})
	assert.True(t, opened)
}

// GetRecommendations' breaker throttles: some 13% of its calls time out,
// below its 95% success threshold, so it refuses a share of the calls
// and stays closed.
func TestDemoBreakerThrottles(t *testing.T) {
	d := startDemo(t, defaultScenario)
	readStream(t, d.base+"/hystrix/stream", func(f map[string]streamObject) bool {
		r := f["HystrixCommand GetRecommendations"]
		return r.CircuitBreakerThrottlePercentage > 0 && r.RollingCountShortCircuited > 0 && !r.IsCircuitBreakerOpen
	})
}

func TestDemoPoolRejects(t *testing.T) {
	d := startDemo(t, defaultScenario)
	readStream(t, d.base+"/hystrix/stream", func(f map[string]streamObject) bool {
		return f["HystrixThreadPool SearchService"].RollingCountCommandRejections > 0
	})
}

// The guard of the demo's API refuses part of its callers' requests
// with a Retry-After, and their client retries them after it and is
// served.
func TestDemoGuardRefusesAndTheClientRetries(t *testing.T) {
	d := startDemo(t, defaultScenario)
	readStream(t, d.base+"/hystrix/stream", func(f map[string]streamObject) bool {
		api, client := f["HystrixCommand CheckoutAPI"], f["HystrixCommand CheckoutClient"]
		return api.RollingCountRateLimited > 0 && api.RollingCountSuccess > 0 && client.RollingCountRetried > 0
	})
	resp, err := http.Post(d.base+checkoutPath, "", nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusTooManyRequests {
		assert.Equal(t, "1", resp.Header.Get("Retry-After"), "a second at most, until the bucket has a token")
	} else {
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	}
}

func TestDemoMain(t *testing.T) {
	t.Run("stops after -duration and exits 0", func(t *testing.T) {
		reg := command.NewRegistry()
		defer reg.Close()
		var out, errOut syncBuffer
		code := demoMain(context.Background(), []string{"-addr", "127.0.0.1:0", "-duration", "300ms"}, &out, &errOut, reg)
		assert.Equal(t, 0, code, errOut.String())
		assert.Contains(t, out.String(), "/hystrix/")
		assert.Contains(t, out.String(), "stopped")
	})
	t.Run("stops when its context ends", func(t *testing.T) {
		reg := command.NewRegistry()
		defer reg.Close()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out, errOut syncBuffer
		assert.Equal(t, 0, demoMain(ctx, []string{"-addr", "127.0.0.1:0"}, &out, &errOut, reg), errOut.String())
	})
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"bad duration", []string{"-duration", "soon"}, 2, "-duration"},
		{"negative duration", []string{"-duration", "-1s"}, 2, "-duration -1s is negative"},
		{"extra argument", []string{"now"}, 2, "unexpected arguments"},
		{"bad address", []string{"-addr", "127.0.0.1:99999"}, 1, "99999"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := command.NewRegistry()
			defer reg.Close()
			var out, errOut syncBuffer
			assert.Equal(t, tc.code, demoMain(context.Background(), tc.args, &out, &errOut, reg))
			assert.Contains(t, errOut.String(), tc.msg)
		})
	}
}

func TestListenFallsBackToAFreePortWhenTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()

	ln, fellBack, err := listen(taken.Addr().String())
	require.NoError(t, err)
	defer ln.Close()
	assert.True(t, fellBack)
	assert.NotEqual(t, taken.Addr().String(), ln.Addr().String())
	assert.True(t, strings.HasPrefix(ln.Addr().String(), "127.0.0.1:"))

	free := ln.Addr().String()
	require.NoError(t, ln.Close())
	ln2, fellBack, err := listen(free)
	require.NoError(t, err)
	defer ln2.Close()
	assert.False(t, fellBack, "a free port is used as it is")
	assert.Equal(t, free, ln2.Addr().String())
}

func TestDefaultRegistriesShareTheirMetrics(t *testing.T) {
	assert.Same(t, metricsstream.DefaultRegistry, command.DefaultRegistry.Metrics(),
		"metricsstream.Handler() with no option streams command.DefaultRegistry's commands")
}

// The stream is also at /hystrix.stream, where Netflix's dashboard and
// Turbine users look for it and the README mounts it.
func TestDemoServesTheStreamAtHystrixDotStream(t *testing.T) {
	d := startDemo(t, defaultScenario)
	readStream(t, d.base+"/hystrix.stream", func(f map[string]streamObject) bool {
		_, ok := f["HystrixCommand GetUser"]
		return ok
	})
	assert.Contains(t, d.out.String(), d.base+"/hystrix.stream")
}

// Hystrix's sibling streams are at Hystrix's paths: the configuration of
// every command and pool, and how busy each is.
func TestDemoServesTheConfigurationAndUtilizationStreams(t *testing.T) {
	d := startDemo(t, defaultScenario)
	var config struct {
		Type     string
		Commands map[string]struct {
			ThreadPoolKey string
			Execution     struct{ IsolationStrategy string }
		}
	}
	firstEvent(t, d.base+"/hystrix/config.stream", &config)
	assert.Equal(t, "HystrixConfig", config.Type)
	require.Contains(t, config.Commands, "GetUser")
	assert.Equal(t, "UserService", config.Commands["GetUser"].ThreadPoolKey, "the pool of its group")
	assert.Equal(t, "THREAD", config.Commands["GetUser"].Execution.IsolationStrategy)

	var utilization struct {
		Type        string
		Threadpools map[string]struct{ CorePoolSize int }
	}
	firstEvent(t, d.base+"/hystrix/utilization.stream", &utilization)
	assert.Equal(t, "HystrixUtilization", utilization.Type)
	out := d.out.String()
	assert.Contains(t, out, d.base+"/hystrix/config.stream")
	assert.Contains(t, out, d.base+"/hystrix/utilization.stream")
}

// Each call of the demo's traffic is a request with a request context:
// the request events stream shows each as it ends, in Hystrix's format.
func TestDemoServesTheRequestEventsStream(t *testing.T) {
	d := startDemo(t, defaultScenario)
	var request []struct {
		Name      string
		Events    []any
		Latencies []int
	}
	firstEvent(t, d.base+"/hystrix/requests.stream", &request)
	require.NotEmpty(t, request, "a request lists its executions")
	assert.NotEmpty(t, request[0].Name)
	assert.NotEmpty(t, request[0].Events)
	assert.NotEmpty(t, request[0].Latencies)
	assert.Contains(t, d.out.String(), d.base+"/hystrix/requests.stream")
}

// firstEvent reads the first data event of the stream at url into v.
func firstEvent(t *testing.T, url string, v any) {
	t.Helper()
	sc, disconnect := openStream(t, url)
	defer disconnect()
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			require.NoError(t, json.Unmarshal([]byte(data), v))
			return
		}
	}
	t.Fatalf("the stream at %s ended without an event: %v", url, sc.Err())
}
