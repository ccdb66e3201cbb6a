package turbine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blockingConsul is a Consul agent's health endpoint that answers
// blocking queries: a question whose index is the current one waits
// until the answer changes (or the question ends); any other is answered
// at once. Each answer carries the index, unless the test says which
// header to send.
type blockingConsul struct {
	*httptest.Server
	questions chan *http.Request

	mu      sync.Mutex
	index   uint64
	body    string
	header  *string       // the X-Consul-Index to send, if the test chooses it; nil sends index
	changed chan struct{} // closed when the answer changes
}

func newBlockingConsul(t *testing.T, body string) *blockingConsul {
	t.Helper()
	c := &blockingConsul{questions: make(chan *http.Request, 16), index: 7, body: body, changed: make(chan struct{})}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		c.questions <- req
		c.mu.Lock()
		index, changed := c.index, c.changed
		c.mu.Unlock()
		if req.URL.Query().Get("index") == strconv.FormatUint(index, 10) {
			select {
			case <-changed:
			case <-req.Context().Done():
				return
			}
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if c.header != nil {
			if *c.header != "" {
				w.Header().Set("X-Consul-Index", *c.header)
			}
		} else {
			w.Header().Set("X-Consul-Index", strconv.FormatUint(c.index, 10))
		}
		_, _ = w.Write([]byte(c.body))
	}))
	t.Cleanup(c.Close)
	return c
}

// set changes the answer, and its index to index.
func (c *blockingConsul) set(index uint64, body string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.index, c.body = index, body
	close(c.changed)
	c.changed = make(chan struct{})
}

// sendIndex makes the answers carry h as their X-Consul-Index ("" for
// none) whatever the index.
func (c *blockingConsul) sendIndex(h string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.header = &h
}

// asked returns the query of the next question.
func (c *blockingConsul) asked(t *testing.T) string {
	t.Helper()
	select {
	case req := <-c.questions:
		return req.URL.RawQuery
	case <-time.After(failAfter):
		t.Fatal("Consul was not asked")
		return ""
	}
}

func consulService(ports ...int) string {
	body := "["
	for i, p := range ports {
		if i > 0 {
			body += ","
		}
		body += `{"Node": {"Address": "127.0.0.1"}, "Service": {"Port": ` + strconv.Itoa(p) + `}}`
	}
	return body + "]"
}

func streamsAt(ports ...int) []string {
	var urls []string
	for _, p := range ports {
		urls = append(urls, "http://127.0.0.1:"+strconv.Itoa(p)+"/hystrix.stream")
	}
	return urls
}

// With Wait, each question after the first waits past the index of the
// answer before it, and comes back when the instances change.
func TestConsulWaitsForAChange(t *testing.T) {
	consul := newBlockingConsul(t, consulService(1))
	d, err := Consul(ConsulConfig{Server: consul.URL, Service: "orders", Wait: 90 * time.Second, Client: consul.Client()})
	require.NoError(t, err)
	assert.Equal(t, 90*time.Second+90*time.Second/16, d.(WaitingDiscovery).MaxWait(), "with the sixteenth Consul may add")

	urls, err := d.Instances(context.Background())
	require.NoError(t, err)
	assert.Equal(t, streamsAt(1), urls)
	assert.Equal(t, "passing=true", consul.asked(t), "the first question does not wait")

	type answer struct {
		urls []string
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		urls, err := d.Instances(context.Background())
		answered <- answer{urls, err}
	}()
	assert.Equal(t, "passing=true&index=7&wait=90000ms", consul.asked(t))
	select {
	case a := <-answered:
		t.Fatalf("answered %v before a change", a)
	default:
	}
	consul.set(9, consulService(1, 2))
	a := <-answered
	require.NoError(t, a.err)
	assert.Equal(t, streamsAt(1, 2), a.urls)

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, err := d.Instances(ctx)
		answered <- answer{err: err}
	}()
	assert.Equal(t, "passing=true&index=9&wait=90000ms", consul.asked(t), "past the index of the latest answer")
	cancel()
	assert.ErrorIs(t, (<-answered).err, context.Canceled)
}

// An index that goes backwards makes the next question one that does not
// wait; one that is missing or zero is taken as 1.
func TestConsulIndexRules(t *testing.T) {
	consul := newBlockingConsul(t, consulService(1))
	d, err := Consul(ConsulConfig{Server: consul.URL, Service: "orders", Wait: 1500 * time.Microsecond, Client: consul.Client()})
	require.NoError(t, err)
	ask := func(sent string) string {
		t.Helper()
		consul.sendIndex(sent)
		_, err := d.Instances(context.Background())
		require.NoError(t, err)
		return consul.asked(t)
	}
	assert.Equal(t, "passing=true", ask("12"))
	assert.Equal(t, "passing=true&index=12&wait=2ms", ask("5"), "a wait of whole milliseconds, rounded up")
	assert.Equal(t, "passing=true", ask("0"), "the index went backwards: start over")
	assert.Equal(t, "passing=true&index=1&wait=2ms", ask(""), "an index of zero is taken as 1")
	assert.Equal(t, "passing=true&index=1&wait=2ms", ask("x"), "as is none")
	assert.Equal(t, "passing=true&index=1&wait=2ms", ask("30"), "as is one that is not a number")
	assert.Equal(t, "passing=true&index=30&wait=2ms", ask("30"))
}

// Without Wait, the discovery asks without waiting and is asked every
// interval.
func TestConsulWithoutWaitDoesNotWait(t *testing.T) {
	consul := newBlockingConsul(t, consulService(1))
	d, err := Consul(ConsulConfig{Server: consul.URL, Service: "orders", Client: consul.Client()})
	require.NoError(t, err)
	assert.Zero(t, d.(WaitingDiscovery).MaxWait())
	for range 2 {
		_, err := d.Instances(context.Background())
		require.NoError(t, err)
		assert.Equal(t, "passing=true", consul.asked(t))
	}
}

// An Aggregator reads a change that Consul knows as soon as Consul
// answers, long before its interval.
func TestAggregatorReadsAConsulChangeAtOnce(t *testing.T) {
	consul := newBlockingConsul(t, consulService(1))
	d, err := Consul(ConsulConfig{Server: consul.URL, Service: "orders", Wait: 5 * time.Minute, Client: consul.Client()})
	require.NoError(t, err)
	a, mc := newDiscoveredAggregator(t, d, time.Hour)
	consul.asked(t)
	waitInstances(t, a, streamsAt(1))

	blockUntil(t, mc, 2, "the discovery's gap and the instance's retry")
	mc.Advance(WaitingDiscoveryGap)
	assert.Equal(t, "passing=true&index=7&wait=300000ms", consul.asked(t))
	consul.set(8, consulService(1, 2))
	waitInstances(t, a, streamsAt(1, 2))
	s, _ := a.Discovery()
	assert.Equal(t, t0.Add(WaitingDiscoveryGap), s.Found, "found when Consul answered, not an hour later")
}

// waitInstances waits until a reads the instances urls.
func waitInstances(t *testing.T, a *Aggregator, urls []string) {
	t.Helper()
	deadline := time.Now().Add(failAfter)
	for !assert.ObjectsAreEqual(urls, urlsOf(a.Instances())) {
		require.False(t, time.Now().After(deadline), "the instances are %v, not %v", urlsOf(a.Instances()), urls)
		runtime.Gosched()
	}
}
