package turbine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

var t0 = time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)

// newAggregator returns an Aggregator of instances on a manual clock,
// closed when the test ends (before the instances' servers).
func newAggregator(t *testing.T, instances ...*fakeInstance) (*Aggregator, *clock.Manual) {
	t.Helper()
	mc := clock.NewManual(t0)
	var urls []string
	for _, in := range instances {
		urls = append(urls, in.url())
	}
	a, err := New(urls, WithClock(mc))
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	return a, mc
}

// sum is the events of one sum, by "type name".
type sum map[string]map[string]any

func parseSum(t *testing.T, b []byte) sum {
	t.Helper()
	out := sum{}
	for _, ev := range strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n\n") {
		if ev == "" {
			continue
		}
		data, ok := strings.CutPrefix(ev, "data: ")
		require.True(t, ok, "an event of data: %q", ev)
		dec := json.NewDecoder(strings.NewReader(data))
		dec.UseNumber()
		var o map[string]any
		require.NoError(t, dec.Decode(&o), data)
		out[fmt.Sprint(o["type"], " ", o["name"])] = o
	}
	return out
}

// waitSum reads the sum until cond holds of it, and returns it.
func waitSum(t *testing.T, a *Aggregator, mc *clock.Manual, what string, cond func(sum) bool) sum {
	t.Helper()
	deadline := time.Now().Add(failAfter)
	for {
		s := parseSum(t, a.AppendEvents(nil, mc.Now()))
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s; the sum is %v", what, s)
		}
		runtime.Gosched()
	}
}

func num(v any) string { return fmt.Sprint(v) }

// commandObject is an instance's HystrixCommand object.
func commandObject(name string, successes int, open bool) string {
	return fmt.Sprintf(`{"type":"HystrixCommand","name":%q,"currentTime":%d,"isCircuitBreakerOpen":%t,"rollingCountSuccess":%d,"latencyExecute":{"0":1,"50":%d,"100":40},"reportingHosts":1}`,
		name, t0.UnixMilli(), open, successes, successes)
}

func TestAggregatorSumsTheInstancesStreams(t *testing.T) {
	i1, i2 := newFakeInstance(t), newFakeInstance(t)
	a, mc := newAggregator(t, i1, i2)
	i1.send(t, commandObject("GetUser", 3, false), `{"type":"HystrixThreadPool","name":"Users","currentActiveCount":2,"reportingHosts":1}`)
	i2.send(t, `not an object`, commandObject("GetUser", 4, true)) // in order: once GetUser is summed, the other was read

	s := waitSum(t, a, mc, "both instances are summed", func(s sum) bool {
		return num(s["HystrixCommand GetUser"]["reportingHosts"]) == "2" && s["HystrixThreadPool Users"] != nil
	})
	user := s["HystrixCommand GetUser"]
	assert.Equal(t, "7", num(user["rollingCountSuccess"]))
	assert.Equal(t, map[string]any{"false": json.Number("1"), "true": json.Number("1")}, user["isCircuitBreakerOpen"])
	assert.Equal(t, map[string]any{"0": json.Number("2"), "50": json.Number("7"), "100": json.Number("80")}, user["latencyExecute"])
	assert.Equal(t, "1", num(s["HystrixThreadPool Users"]["reportingHosts"]), "one instance has the pool")

	ins := a.Instances()
	require.Len(t, ins, 2)
	assert.Less(t, ins[0].URL, ins[1].URL, "in the order of their URLs")
	want := map[string]Instance{
		i1.url(): {URL: i1.url(), Connected: true, Objects: 2},
		i2.url(): {URL: i2.url(), Connected: true, Objects: 1, Ignored: 1},
	}
	for _, in := range ins {
		assert.Equal(t, want[in.URL], in)
	}
}

func TestAggregatorForgetsAnInstanceWhileItsStreamIsDownAndAsksAgain(t *testing.T) {
	i1, i2 := newFakeInstance(t), newFakeInstance(t)
	a, mc := newAggregator(t, i1, i2)
	i1.send(t, commandObject("GetUser", 3, false))
	i2.send(t, commandObject("GetUser", 4, false))
	waitSum(t, a, mc, "both instances are summed", func(s sum) bool { return num(s["HystrixCommand GetUser"]["rollingCountSuccess"]) == "7" })

	i2.hangUp(t)
	waitSum(t, a, mc, "the second instance leaves the sum", func(s sum) bool {
		return num(s["HystrixCommand GetUser"]["reportingHosts"]) == "1" && num(s["HystrixCommand GetUser"]["rollingCountSuccess"]) == "3"
	})
	var down Instance
	for _, in := range a.Instances() {
		if in.URL == i2.url() {
			down = in
		}
	}
	assert.False(t, down.Connected)
	assert.ErrorIs(t, down.Err, errStreamEnded)

	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	require.NoError(t, mc.BlockUntil(ctx, 2), "the first instance's idle timer and the second's retry")
	assert.Equal(t, int32(1), i2.Connections(), "not asked again before the retry delay")
	mc.Advance(DefaultRetryDelay)
	i2.waitServing(t, 2)
	i2.send(t, commandObject("GetUser", 5, false))
	waitSum(t, a, mc, "the second instance is back", func(s sum) bool { return num(s["HystrixCommand GetUser"]["rollingCountSuccess"]) == "8" })
}

func TestAggregatorGivesUpAStreamThatWritesNothing(t *testing.T) {
	i1 := newFakeInstance(t)
	a, mc := newAggregator(t, i1)
	i1.send(t, commandObject("GetUser", 3, false))
	waitSum(t, a, mc, "the instance is read", func(s sum) bool { return s["HystrixCommand GetUser"] != nil })

	mc.Advance(DefaultStaleAfter - time.Millisecond)
	require.True(t, a.Instances()[0].Connected, "not given up before WithStaleAfter")
	mc.Advance(time.Millisecond) // not even a ping for 10s: a host gone without closing
	deadline := time.Now().Add(failAfter)
	for a.Instances()[0].Err == nil {
		require.False(t, time.Now().After(deadline), "the stream was not given up")
		runtime.Gosched()
	}
	assert.EqualError(t, a.Instances()[0].Err, i1.url()+" wrote nothing for 10s")
	assert.False(t, a.Instances()[0].Connected)

	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	require.NoError(t, mc.BlockUntil(ctx, 1), "the retry's timer")
	mc.Advance(DefaultRetryDelay)
	i1.waitServing(t, 2) // asked again, and the given-up connection is gone
	i1.send(t, commandObject("GetUser", 4, false))
	waitSum(t, a, mc, "the instance is read again", func(s sum) bool { return num(s["HystrixCommand GetUser"]["rollingCountSuccess"]) == "4" })
}

func TestAggregatorDropsWhatNoInstanceWritesAnyMore(t *testing.T) {
	i1 := newFakeInstance(t)
	a, mc := newAggregator(t, i1)
	i1.send(t, commandObject("GetUser", 1, false), commandObject("Retired", 1, false))
	waitSum(t, a, mc, "both commands are summed", func(s sum) bool { return s["HystrixCommand Retired"] != nil })

	mc.Advance(6 * time.Second)
	i1.send(t, commandObject("GetUser", 2, false)) // Retired is no longer written
	waitSum(t, a, mc, "the new frame is read", func(s sum) bool { return num(s["HystrixCommand GetUser"]["rollingCountSuccess"]) == "2" })
	mc.Advance(5 * time.Second) // Retired was last written 11s ago
	s := parseSum(t, a.AppendEvents(nil, mc.Now()))
	assert.Equal(t, map[string]any{"type": "HystrixCommand", "name": "Retired", "deleteData": "true"}, s["HystrixCommand Retired"],
		"the dashboard is told to drop the card")
	assert.Equal(t, "2", num(s["HystrixCommand GetUser"]["rollingCountSuccess"]))

	mc.Advance(DefaultStaleAfter + time.Millisecond)
	s = parseSum(t, a.AppendEvents(nil, mc.Now()))
	assert.NotContains(t, s, "HystrixCommand Retired", "told for WithStaleAfter, then forgotten")
}

func TestSetInstancesStartsAndStopsReading(t *testing.T) {
	i1, i2 := newFakeInstance(t), newFakeInstance(t)
	a, mc := newAggregator(t, i1)
	i1.send(t, commandObject("GetUser", 3, false))
	waitSum(t, a, mc, "the first instance is summed", func(s sum) bool { return s["HystrixCommand GetUser"] != nil })

	require.NoError(t, a.SetInstances([]string{i1.url(), i2.url()}))
	i2.send(t, commandObject("GetUser", 4, false))
	waitSum(t, a, mc, "the added instance is summed", func(s sum) bool { return num(s["HystrixCommand GetUser"]["rollingCountSuccess"]) == "7" })

	require.NoError(t, a.SetInstances([]string{i2.url()}))
	s := parseSum(t, a.AppendEvents(nil, mc.Now()))
	assert.Equal(t, "4", num(s["HystrixCommand GetUser"]["rollingCountSuccess"]), "the removed instance left the sum at once")
	assert.Equal(t, []string{i2.url()}, instanceURLs(a))
}

func instanceURLs(a *Aggregator) []string {
	var urls []string
	for _, in := range a.Instances() {
		urls = append(urls, in.URL)
	}
	return urls
}

func TestNewRefusesBadInstanceURLs(t *testing.T) {
	cases := []struct {
		urls []string
		msg  string
	}{
		{[]string{""}, `"" is not an http or https URL`},
		{[]string{"/hystrix.stream"}, `"/hystrix.stream" is not an http or https URL`},
		{[]string{"ftp://h/hystrix.stream"}, `"ftp://h/hystrix.stream" is not an http or https URL`},
		{[]string{"http:///hystrix.stream"}, `"http:///hystrix.stream" has no host`},
		{[]string{"http://[::1"}, `"http://[::1"`},
		{[]string{"http://h/s", "http://h/s"}, `"http://h/s" is listed twice`},
		// One stream, which would be one instance label twice.
		{[]string{"http://ops:a@h/s", "http://ops:b@h/s"}, `"http://ops:a@h/s" and "http://ops:b@h/s" name one instance`},
		{[]string{"HTTP://h/s", "http://h/s#"}, `"HTTP://h/s" and "http://h/s#" name one instance`},
	}
	for _, tc := range cases {
		a, err := New(tc.urls)
		require.ErrorIs(t, err, ErrBadInstance, "%q", tc.urls)
		assert.ErrorContains(t, err, tc.msg)
		assert.Nil(t, a)
	}

	a, err := New(nil)
	require.NoError(t, err, "no instances yet")
	defer a.Close()
	require.ErrorIs(t, a.SetInstances([]string{"http://h/s", "nope"}), ErrBadInstance)
	assert.Empty(t, a.Instances(), "a bad list changes nothing")
}

// Why an instance cannot be read names it without the password of its
// URL, as net/http's own errors do: it is shown beside its RedactedURL
// (cmd/turbine's page, logs).
func TestAggregatorSaysWhyAnInstanceCannotBeRead(t *testing.T) {
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html></html>"))
	}))
	defer page.Close()
	withPassword := func(srv *httptest.Server, path string) (url, shown string) {
		host := strings.TrimPrefix(srv.URL, "http://")
		return "http://ops:s3cret@" + host + path, "http://ops:xxxxx@" + host + path
	}
	notFoundURL, notFoundShown := withPassword(notFound, "/hystrix.stream")
	pageURL, pageShown := withPassword(page, "/")
	a, err := New([]string{notFoundURL, pageURL}, WithClock(clock.NewManual(t0)))
	require.NoError(t, err)
	defer a.Close()

	deadline := time.Now().Add(failAfter)
	for {
		ins := a.Instances()
		if ins[0].Err != nil && ins[1].Err != nil {
			byURL := map[string]string{ins[0].URL: ins[0].Err.Error(), ins[1].URL: ins[1].Err.Error()}
			assert.Equal(t, notFoundShown+" answered 404 Not Found", byURL[notFoundURL])
			assert.Equal(t, pageShown+` answered "text/html", not an event stream`, byURL[pageURL])
			return
		}
		require.False(t, time.Now().After(deadline), "no error reported: %+v", ins)
		runtime.Gosched()
	}
}

func TestHandlerServesTheSum(t *testing.T) {
	i1 := newFakeInstance(t)
	a, mc := newAggregator(t, i1)
	i1.send(t, commandObject("GetUser", 3, false))
	waitSum(t, a, mc, "the instance is read", func(s sum) bool { return s["HystrixCommand GetUser"] != nil })

	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	header, frame := firstFrame(t, srv.URL)
	assert.Equal(t, "text/event-stream;charset=UTF-8", header.Get("Content-Type"))
	s := parseSum(t, []byte(frame))
	assert.Equal(t, "3", num(s["HystrixCommand GetUser"]["rollingCountSuccess"]), "the first frame at once")
}

// The streams of rxhystrix services add up: two registries' commands,
// read through their metricsstream handlers.
func TestAggregatorSumsRxhystrixStreams(t *testing.T) {
	var urls []string
	for _, successes := range []int{3, 4} {
		mc := clock.NewManual(t0)
		reg := metricsstream.NewRegistry(mc)
		m := reg.Command("GetUser", metricsstream.Config{})
		for range successes {
			c := metricsstream.Completion{CommandKey: "GetUser", ExecutionLatency: 10 * time.Millisecond, TotalLatency: 10 * time.Millisecond, Executed: true}
			c.Events.Add(metricsstream.Success, 1)
			m.MarkStart()
			m.MarkCompletion(&c)
		}
		mc.Advance(time.Second) // the bucket closes
		done := make(chan struct{})
		srv := httptest.NewServer(metricsstream.Handler(metricsstream.WithRegistry(reg), metricsstream.WithShutdown(done)))
		t.Cleanup(srv.Close)
		t.Cleanup(func() { close(done) })
		urls = append(urls, srv.URL)
	}
	mc := clock.NewManual(t0)
	a, err := New(urls, WithClock(mc))
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })

	s := waitSum(t, a, mc, "both services are summed", func(s sum) bool { return num(s["HystrixCommand GetUser"]["reportingHosts"]) == "2" })
	user := s["HystrixCommand GetUser"]
	assert.Equal(t, "7", num(user["rollingCountSuccess"]))
	assert.Equal(t, "7", num(user["requestCount"]))
	assert.Equal(t, false, user["isCircuitBreakerOpen"], "closed on both")
}

func TestCloseStopsReading(t *testing.T) {
	i1 := newFakeInstance(t)
	a, mc := newAggregator(t, i1)
	i1.send(t, commandObject("GetUser", 3, false))
	waitSum(t, a, mc, "the instance is read", func(s sum) bool { return s["HystrixCommand GetUser"] != nil })

	require.NoError(t, a.Close())
	assert.Empty(t, a.Instances())
	// The sum is empty: each object shown is dropped with a deleteData
	// event, for WithStaleAfter, then the frames are empty.
	assert.Equal(t, map[string]any{"type": "HystrixCommand", "name": "GetUser", "deleteData": "true"},
		parseSum(t, a.AppendEvents(nil, mc.Now()))["HystrixCommand GetUser"])
	mc.Advance(DefaultStaleAfter + time.Millisecond)
	assert.Empty(t, a.AppendEvents(nil, mc.Now()), "nothing more to sum")
	assert.True(t, errors.Is(a.SetInstances([]string{i1.url()}), ErrClosed))
	require.NoError(t, a.Close(), "a second Close is harmless")
}

func TestOptionsPanicOnBadInput(t *testing.T) {
	cases := []struct {
		name string
		f    func()
		msg  string
	}{
		{"nil option", func() { New(nil, nil) }, "turbine: New: option 0 is nil"},
		{"nil clock", func() { WithClock(nil) }, "turbine: WithClock with nil clock"},
		{"nil client", func() { WithHTTPClient(nil) }, "turbine: WithHTTPClient with nil client"},
		{"client with a timeout", func() { WithHTTPClient(&http.Client{Timeout: time.Second}) }, "turbine: WithHTTPClient: the client's Timeout 1s would cut every stream"},
		{"no retry delay", func() { WithRetryDelay(0) }, "turbine: WithRetryDelay: delay 0s is not positive"},
		{"no staleness", func() { WithStaleAfter(-time.Second) }, "turbine: WithStaleAfter: -1s is not positive"},
	}
	for _, tc := range cases {
		assert.PanicsWithValue(t, tc.msg, tc.f, tc.name)
	}
}

// A frame lists commands, then pools, then collapsers, as Hystrix's
// stream does, then any other type; each by name. Dropped objects follow,
// in the same order.
func TestAppendEventsOrdersByTypeThenName(t *testing.T) {
	i1 := newFakeInstance(t)
	a, mc := newAggregator(t, i1)
	objects := []string{
		`{"type":"Zeta","name":"b"}`, `{"type":"HystrixCollapser","name":"C"}`, `{"type":"Alpha","name":"z"}`,
		`{"type":"HystrixThreadPool","name":"P"}`, `{"type":"HystrixCommand","name":"B"}`,
		`{"type":"HystrixCommand","name":"A"}`, `{"type":"Alpha","name":"a"}`,
	}
	i1.send(t, objects...)
	waitSum(t, a, mc, "every object is read", func(s sum) bool { return len(s) == len(objects) })
	want := []string{"HystrixCommand A", "HystrixCommand B", "HystrixThreadPool P", "HystrixCollapser C", "Alpha a", "Alpha z", "Zeta b"}
	assert.Equal(t, want, order(t, a.AppendEvents(nil, mc.Now())))

	mc.Advance(DefaultStaleAfter + time.Millisecond) // none is written any more
	assert.Equal(t, want, order(t, a.AppendEvents(nil, mc.Now())), "the deleteData events")
}

// order lists the "type name" of each event, in the order written.
func order(t *testing.T, events []byte) []string {
	t.Helper()
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(string(events), "\n\n"), "\n\n") {
		var o struct{ Type, Name string }
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &o), ev)
		out = append(out, o.Type+" "+o.Name)
	}
	return out
}

func TestInstanceRedactedURL(t *testing.T) {
	for url, want := range map[string]string{
		"http://10.0.0.7:8080/hystrix.stream":            "http://10.0.0.7:8080/hystrix.stream",
		"http://ops:secret@10.0.0.8:8080/hystrix.stream": "http://ops:xxxxx@10.0.0.8:8080/hystrix.stream",
		"https://ops@10.0.0.9/turbine.stream":            "https://ops@10.0.0.9/turbine.stream",
		"http://bad host/":                               "http://bad host/",
	} {
		assert.Equal(t, want, Instance{URL: url}.RedactedURL(), url)
	}
}

// Instances counts the objects in the sum, which leaves out an object the
// instance stopped writing WithStaleAfter ago, whether or not a stream of
// the sum has been read since.
func TestInstancesLeavesOutObjectsNoLongerWritten(t *testing.T) {
	i1 := newFakeInstance(t)
	a, mc := newAggregator(t, i1)
	i1.send(t, commandObject("GetUser", 1, false), commandObject("Retired", 1, false))
	waitSum(t, a, mc, "both commands are summed", func(s sum) bool { return s["HystrixCommand Retired"] != nil })
	require.Equal(t, 2, a.Instances()[0].Objects)

	mc.Advance(6 * time.Second)
	i1.send(t, commandObject("GetUser", 2, false)) // Retired is no longer written
	waitSum(t, a, mc, "the new frame is read", func(s sum) bool { return num(s["HystrixCommand GetUser"]["rollingCountSuccess"]) == "2" })
	mc.Advance(5 * time.Second) // Retired was last written 11s ago

	assert.Equal(t, 1, a.Instances()[0].Objects, "Retired is out of the sum")
	s := parseSum(t, a.AppendEvents(nil, mc.Now()))
	assert.Equal(t, "true", s["HystrixCommand Retired"]["deleteData"])
	assert.Equal(t, 1, a.Instances()[0].Objects)
}
