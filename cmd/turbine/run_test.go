package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/internal/ssetest"
	"github.com/rxhystrix/rxhystrix/metricsstream/turbine"
)

// failAfter bounds a wait for the network, so that a broken test fails
// instead of hanging.
const failAfter = 10 * time.Second

func TestRunRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no -cluster or -config to serve"},
		{[]string{"-cluster", "api"}, `invalid value "api" for flag -cluster: bad -cluster "api": want NAME=INSTANCES`},
		{[]string{"-cluster", "=http://10.0.0.7/hystrix.stream"}, `want NAME=INSTANCES`},
		{[]string{"-cluster", "a b=http://10.0.0.7/hystrix.stream"}, `the name "a b" cannot be a query's cluster`},
		{[]string{"-cluster", "api=http://10.0.0.7/s", "-cluster", "api=http://10.0.0.8/s"}, `cluster "api" is given twice`},
		{[]string{"-cluster", "api=dns:ftp://orders/hystrix.stream"}, `bad -cluster "api=dns:ftp://orders/hystrix.stream": turbine: bad instance URL: "ftp://orders/hystrix.stream" is not an http or https URL`},
		{[]string{"-cluster", "api=srv:http://_m._tcp.orders:80/s"}, `has a port, which SRV records give`},
		{[]string{"-cluster", "api=eureka:http://eureka:8761/eureka/"}, `turbine: bad discovery configuration: EurekaConfig.App "" is not an application's name`},
		{[]string{"-cluster", "api=eureka:http://eureka:8761/eureka/?app=A&zone=b"}, `"http://eureka:8761/eureka/?app=A&zone=b": unknown parameter "zone"`},
		{[]string{"-cluster", "api=eureka:http://eureka:8761/eureka/?app=A&app=B"}, `parameter "app" is given 2 times`},
		{[]string{"-cluster", "api=eureka:http://eureka:8761/eureka/?app=A&port=x"}, `parameter port="x": strconv.Atoi: parsing "x": invalid syntax`},
		{[]string{"-cluster", "api=eureka:http://eureka:8761/eureka/?app=A&ip=maybe"}, `parameter ip="maybe"`},
		{[]string{"-cluster", "api=consul:http://127.0.0.1:8500/?tag=metrics"}, `ConsulConfig.Service "" is not a service's name`},
		{[]string{"-cluster", "api=consul:http://127.0.0.1:8500/?service=orders&scheme=ftp"}, `ConsulConfig.Scheme "ftp" is not http or https`},
		{[]string{"-cluster", "api=consul:http://127.0.0.1:8500/?service=orders&path=%zz"}, `the query of "http://127.0.0.1:8500/?service=orders&path=%zz"`},
		{[]string{"-cluster", "api=consul:http://127.0.0.1:8500/?service=orders&wait=5"}, `parameter wait="5": time: missing unit in duration "5"`},
		{[]string{"-cluster", "api=consul:http://127.0.0.1:8500/?service=orders&wait=1h"}, `ConsulConfig.Wait 1h0m0s is not between 0 and 10m0s`},
		{[]string{"-cluster", "api=http://10.0.0.7/s", "-interval", "0s"}, "-interval 0s is not positive"},
		{[]string{"-cluster", "api=http://10.0.0.7/s", "extra"}, `unexpected argument "extra"`},
		{[]string{"-cluster", "api=http://10.0.0.7/s", "-retry-delay", "-1s"}, "-retry-delay -1s is not positive"},
		{[]string{"-cluster", "api=http://10.0.0.7/s", "-stale-after", "0s"}, "-stale-after 0s is not positive"},
		// Within one frame of Hystrix's stream every instance would be
		// given up between two frames, its objects gone from the sum.
		{[]string{"-cluster", "api=http://10.0.0.7/s", "-stale-after", "100ms"}, "-stale-after 100ms does not exceed 500ms"},
		{[]string{"-cluster", "api=http://10.0.0.7/s", "-stale-after", "500ms"}, "-stale-after 500ms does not exceed 500ms"},
		{[]string{"-cluster", "api=http://10.0.0.7/s,10.0.0.8"}, `cluster api: turbine: bad instance URL: "10.0.0.8" is not an http or https URL`},
	} {
		err := run(ended(), tc.args, io.Discard, io.Discard)
		require.Error(t, err, "%q", tc.args)
		assert.Contains(t, err.Error(), tc.want, "%q", tc.args)
	}
}

// ended returns a context that has ended: run given it and flags it
// takes starts and returns nil at once, rather than serve until the test
// times out.
func ended() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// started runs the turbine with args on a free loopback port until the
// test ends, and returns its base URL.
func started(t *testing.T, args ...string) string {
	t.Helper()
	base, _ := startedWithOutput(t, args...)
	return base
}

// startedWithOutput is started, and returns too what the turbine has
// written so far.
func startedWithOutput(t *testing.T, args ...string) (base string, output func() string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &outputWriter{firstLine: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"-listen", "127.0.0.1:0"}, args...), out, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
	})
	select {
	case <-out.firstLine:
	case err := <-done:
		t.Fatalf("the turbine ended before it said where it serves: %v", err)
	}
	m := regexp.MustCompile(`serving \d+ clusters on (https?://\S+)/`).FindStringSubmatch(out.String())
	require.NotNil(t, m, out.String())
	return m[1], out.String
}

// outputWriter keeps what the turbine writes, and closes firstLine once
// it has written a line.
type outputWriter struct {
	mu        sync.Mutex
	written   strings.Builder
	firstLine chan struct{}
}

func (w *outputWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.written.String(), "\n")
	w.written.Write(p)
	if !had && strings.Contains(w.written.String(), "\n") {
		close(w.firstLine)
	}
	return len(p), nil
}

func (w *outputWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written.String()
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	res, err := http.Get(u)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// The turbine sums a cluster's instances, and serves the sum, the
// dashboard, the clusters' page and the metrics; it ends with its
// context.
func TestRunServesTheClusters(t *testing.T) {
	instance := ssetest.NewStream()
	t.Cleanup(instance.Close)
	srv := httptest.NewServer(instance)
	t.Cleanup(srv.Close)
	stream := srv.URL + "/hystrix.stream"
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	local := "http://localhost:" + port + "/hystrix.stream"
	base := started(t, "-cluster", "api="+stream, "-cluster", "local=dns:"+local, "-interval", "1m")

	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	go func() { // the instance writes the frame to each Aggregator that reads it
		for ctx.Err() == nil && instance.Send(ctx, ssetest.Data(`{"type":"HystrixCommand","name":"GetUser","rollingCountSuccess":3,"reportingHosts":1}`)) == nil {
		}
	}()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/turbine.stream?cluster=api", nil)
	require.NoError(t, err)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	assert.Equal(t, "text/event-stream;charset=UTF-8", res.Header.Get("Content-Type"))
	lines := bufio.NewScanner(res.Body)
	found := false
	for !found && lines.Scan() {
		found = strings.HasPrefix(lines.Text(), "data: ") && strings.Contains(lines.Text(), `"name":"GetUser"`) &&
			strings.Contains(lines.Text(), `"rollingCountSuccess":3`)
	}
	require.True(t, found, "the cluster's sum has the instance's command")

	code, body := get(t, base+"/turbine.stream?cluster=web")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Contains(t, body, `no cluster "web"; the clusters are: api, local`)

	code, body = get(t, base+"/")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `<h2 id="api">api</h2>`)
	assert.Contains(t, body, `href="/hystrix/?`+htmlAttr(url.Values{"stream": {"/turbine.stream?cluster=api"}, "title": {"api"}}.Encode())+`"`)
	assert.Contains(t, body, "<td>"+stream+"</td><td>yes</td>")
	assert.Contains(t, body, "dns:"+local+" · looked up every 1m0s")

	code, body = get(t, base+"/hystrix/")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "turbine.stream?cluster=api", "the first cluster's page")

	code, body = get(t, base+"/metrics")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `rxhystrix_turbine_instance_connected{cluster="api",instance="`+stream+`"} 1`)
	assert.Contains(t, body, `rxhystrix_turbine_discovery_failures_total{cluster="local"} 0`)
}

// The turbine finds a cluster's instances in Eureka and in Consul, and
// reads them.
func TestRunFindsInstancesInEurekaAndConsul(t *testing.T) {
	instance := ssetest.NewStream()
	t.Cleanup(instance.Close)
	srv := httptest.NewServer(instance)
	t.Cleanup(srv.Close)
	host, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	var waited atomic.Bool // a question to Consul waited for a change
	registry := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/eureka/apps/ORDERS":
			fmt.Fprintf(w, `{"application": {"instance": [{"hostName": %q, "status": "UP", "port": {"$": %s, "@enabled": "true"}}]}}`, host, port)
		case "/v1/health/service/billing":
			if r.URL.Query().Get("wait") == "300000ms" {
				waited.Store(true)
			}
			assert.Equal(t, "metrics", r.URL.Query().Get("tag"))
			assert.Equal(t, "token", r.Header.Get("X-Consul-Token"))
			fmt.Fprintf(w, `[{"Node": {"Address": %q}, "Service": {"Port": %s}}]`, host, port)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(registry.Close)
	t.Setenv("CONSUL_HTTP_TOKEN", "token")
	base := started(t,
		"-cluster", "orders=eureka:"+registry.URL+"/eureka/?app=ORDERS&path=/hystrix.stream",
		"-cluster", "billing=consul:"+registry.URL+"?service=billing&tag=metrics&wait=5m")

	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	go func() {
		for ctx.Err() == nil && instance.Send(ctx, ssetest.Data(`{"type":"HystrixCommand","name":"GetUser","reportingHosts":1}`)) == nil {
		}
	}()
	stream := "http://" + srv.Listener.Addr().String() + "/hystrix.stream"
	want := []string{
		`rxhystrix_turbine_instance_connected{cluster="orders",instance="` + stream + `"} 1`,
		`rxhystrix_turbine_instance_connected{cluster="billing",instance="` + stream + `"} 1`,
	}
	for {
		_, body := get(t, base+"/metrics")
		if strings.Contains(body, want[0]) && strings.Contains(body, want[1]) {
			break
		}
		require.NoError(t, ctx.Err(), "both clusters read the instance: %s", body)
		runtime.Gosched()
	}
	_, body := get(t, base+"/")
	assert.Contains(t, body, "eureka:"+registry.URL+"/eureka/?app=ORDERS&amp;path=/hystrix.stream · looked up every 30s")
	assert.Contains(t, body, "consul:"+registry.URL+"?service=billing&amp;tag=metrics&amp;wait=5m · looked up as it changes")
	for !waited.Load() {
		require.NoError(t, ctx.Err(), "Consul was asked to wait for a change, a second after its first answer")
		runtime.Gosched()
	}
}

// htmlAttr escapes s as html/template escapes an attribute's value.
func htmlAttr(s string) string { return strings.ReplaceAll(s, "&", "&amp;") }

// The clusters' page says when a cluster's lookup fails, and redacts the
// instances' passwords.
func TestIndexShowsAFailedLookup(t *testing.T) {
	refused := errors.New("lookup orders.shop.svc: no such host")
	lookup := clusterSpec{name: "orders", lookup: "dns:", urls: []string{"http://ops:secret@orders.shop.svc:8080/hystrix.stream"},
		discover: func(*http.Client) (turbine.Discovery, error) {
			return turbine.DiscoveryFunc(func(context.Context) ([]string, error) { return nil, refused }), nil
		}}
	a, err := lookup.aggregator(http.DefaultClient, time.Minute)
	require.NoError(t, err)
	defer a.Close()
	deadline := time.Now().Add(failAfter)
	for s, _ := a.Discovery(); s.Err == nil; s, _ = a.Discovery() {
		require.False(t, time.Now().After(deadline), "the lookup was not made")
		runtime.Gosched()
	}

	rec := httptest.NewRecorder()
	indexHandler(clusterFlag{lookup}, map[string]*turbine.Aggregator{"orders": a}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	body := rec.Body.String()
	assert.Contains(t, body, "dns:http://ops:xxxxx@orders.shop.svc:8080/hystrix.stream · looked up every 1m0s, "+
		`<span class="down">the last lookup failed: turbine: discovery: lookup orders.shop.svc: no such host</span>`)
	assert.NotContains(t, body, "secret")
	assert.Contains(t, body, `<td colspan="4">no instance</td>`)
}

// What the page shows of a cluster's instances has no password.
func TestShownRedactsPasswords(t *testing.T) {
	for what, want := range map[string]string{
		"http://10.0.0.7/s,http://ops:pw@10.0.0.8/s": "http://10.0.0.7/s,http://ops:xxxxx@10.0.0.8/s",
		"dns:http://ops:pw@orders.shop.svc:8080/s":   "dns:http://ops:xxxxx@orders.shop.svc:8080/s",
		"srv:http://ops:pw@_m._tcp.orders/s":         "srv:http://ops:xxxxx@_m._tcp.orders/s",
	} {
		var f clusterFlag
		require.NoError(t, f.Set("c="+what))
		assert.Equal(t, want, f[0].shown())
	}
}

// -stale-after and -retry-delay reach the clusters' reading: an instance
// that writes nothing for -stale-after is given up, as the page says, and
// one whose stream ends is asked again after -retry-delay. Hystrix's
// defaults (10s and 1s) would take longer than the test waits.
func TestRunTakesStaleAfterAndRetryDelay(t *testing.T) {
	t.Run("stale-after", func(t *testing.T) {
		instance := ssetest.NewStream()
		t.Cleanup(instance.Close)
		srv := httptest.NewServer(instance)
		t.Cleanup(srv.Close)
		base := started(t, "-cluster", "api="+srv.URL+"/hystrix.stream", "-stale-after", "600ms", "-retry-delay", "1h")
		ctx, cancel := context.WithTimeout(context.Background(), failAfter)
		defer cancel()
		require.NoError(t, instance.Send(ctx, ssetest.Data(`{"type":"HystrixCommand","name":"GetUser","reportingHosts":1}`)))
		waitFor(t, http.DefaultClient, base+"/", "wrote nothing for 600ms")
	})
	t.Run("retry-delay", func(t *testing.T) {
		instance := ssetest.NewStream()
		t.Cleanup(instance.Close)
		srv := httptest.NewServer(instance)
		t.Cleanup(srv.Close)
		started(t, "-cluster", "api="+srv.URL+"/hystrix.stream", "-retry-delay", "10ms")
		ctx, cancel := context.WithTimeout(context.Background(), failAfter)
		defer cancel()
		for instance.Connections() < 20 {
			require.NoError(t, instance.HangUp(ctx), "asked again %d times", instance.Connections())
		}
	})
}
