package turbine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// An Aggregator reads the Hystrix metrics streams of a cluster's
// instances and sums them into one, as Netflix's Turbine does. It reads
// each instance on a goroutine of its own, asks again after
// [WithRetryDelay] when a stream fails or ends, and forgets an
// instance's objects when its stream does, so that the sum is that of
// the instances it reads now. Make one with [New]; its methods are safe
// for concurrent use.
type Aggregator struct {
	clock      clock.Clock
	client     *http.Client
	retryDelay time.Duration
	staleAfter time.Duration
	discovery  *discovery // nil without WithDiscovery

	mu        sync.Mutex
	instances map[string]*instance // by URL
	shown     map[objectKey]bool   // the objects of the last sum
	gone      map[objectKey]time.Time
	closed    bool
}

// Errors of New and SetInstances, for errors.Is.
var (
	// ErrBadInstance is an instance URL that cannot be read: not an
	// absolute http or https URL, or listed twice (or as another URL
	// that differs from it only in its password, the case of its scheme
	// or an empty fragment).
	ErrBadInstance = errors.New("turbine: bad instance URL")
	// ErrClosed is SetInstances after Close.
	ErrClosed = errors.New("turbine: the aggregator is closed")
)

// New returns an Aggregator that reads the streams at the URLs instances
// (each an instance's metricsstream.Handler, or a Java Hystrix service's
// hystrix.stream: "http://10.0.0.7:8080/hystrix.stream"). An empty list
// is allowed; [Aggregator.SetInstances] changes it. A URL that is not an
// absolute http or https URL, or that is listed twice, is an error that
// names it and matches [ErrBadInstance]. It panics on a nil Option.
func New(instances []string, opts ...Option) (*Aggregator, error) {
	a := &Aggregator{
		clock:      clock.Real,
		client:     http.DefaultClient,
		retryDelay: DefaultRetryDelay,
		staleAfter: DefaultStaleAfter,
		instances:  make(map[string]*instance),
		shown:      make(map[objectKey]bool),
		gone:       make(map[objectKey]time.Time),
	}
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("turbine: New: option %d is nil", i))
		}
		o.apply(a)
	}
	if err := a.SetInstances(instances); err != nil {
		return nil, err
	}
	a.startDiscovery()
	return a, nil
}

// SetInstances makes the Aggregator read the streams at urls from now on,
// as a discovery of the cluster's instances would: it starts reading the
// new ones, and stops reading those no longer listed, whose objects leave
// the sum. The URLs are checked as New checks them; on an error nothing
// changes. After Close it returns ErrClosed. With [WithDiscovery], the
// Discovery's next answer replaces the list.
func (a *Aggregator) SetInstances(urls []string) error {
	return a.setInstances(urls, nil)
}

// setInstances is SetInstances, for the discovery d when it is not nil:
// d's status says it found the instances under the lock that stores them,
// so that whoever sees them sees when they were found.
func (a *Aggregator) setInstances(urls []string, d *discovery) error {
	seen := make(map[string]bool, len(urls))
	// By the URL an Instance's RedactedURL shows, which labels its
	// metrics: two URLs that differ only in a password, the case of
	// their scheme or an empty fragment name one stream, and would make
	// two series of one name and labels, failing every scrape.
	shown := make(map[string]string, len(urls))
	for _, u := range urls {
		p, err := parseInstanceURL(u)
		if err != nil {
			return err
		}
		if seen[u] {
			return fmt.Errorf("%w: %q is listed twice", ErrBadInstance, u)
		}
		if other, ok := shown[p.Redacted()]; ok {
			return fmt.Errorf("%w: %q and %q name one instance", ErrBadInstance, other, u)
		}
		seen[u], shown[p.Redacted()] = true, u
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return ErrClosed
	}
	var stopped []*instance
	for u, in := range a.instances {
		if !seen[u] {
			in.cancel() // out of the map, its objects are out of the sum
			delete(a.instances, u)
			stopped = append(stopped, in)
		}
	}
	for _, u := range urls {
		if a.instances[u] == nil {
			ctx, cancel := context.WithCancel(context.Background())
			in := &instance{url: u, cancel: cancel, done: make(chan struct{}), objects: make(map[objectKey]*object)}
			a.instances[u] = in
			go a.follow(ctx, in)
		}
	}
	if d != nil {
		d.status.Err, d.status.Found = nil, a.clock.Now()
	}
	a.mu.Unlock()
	for _, in := range stopped {
		<-in.done
	}
	return nil
}

// parseInstanceURL parses s, the URL of an instance's stream (or of
// DNS's and SRV's instances), and refuses one that is not an absolute
// http or https URL with an error that names it and matches
// ErrBadInstance.
func parseInstanceURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %q: %v", ErrBadInstance, s, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%w: %q is not an http or https URL", ErrBadInstance, s)
	case u.Host == "":
		return nil, fmt.Errorf("%w: %q has no host", ErrBadInstance, s)
	}
	return u, nil
}

// Instance is what an Aggregator knows of one instance's stream.
type Instance struct {
	// URL is the instance's stream.
	URL string
	// Connected reports whether the stream is being read now.
	Connected bool
	// Err is why the last stream ended or could not be read, or nil.
	Err error
	// Objects is how many objects of the instance are in the sum.
	Objects int
	// Ignored counts the events that were not JSON objects with a type
	// and a name, which the sum leaves out.
	Ignored int64
}

// RedactedURL is the instance's URL with its password, if any, replaced
// by "xxxxx", as url.URL.Redacted does: what to log it or label a metric
// with.
func (in Instance) RedactedURL() string {
	u, err := url.Parse(in.URL)
	if err != nil {
		return in.URL
	}
	return u.Redacted()
}

// Instances returns the state of every instance, in the order of their
// URLs.
func (a *Aggregator) Instances() []Instance {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]Instance, 0, len(a.instances))
	now := a.clock.Now()
	for _, in := range a.instances {
		// An object the instance stopped writing is out of the sum,
		// though no AppendEvents has yet dropped it.
		objects := 0
		for _, o := range in.objects {
			if a.inSum(o, now) {
				objects++
			}
		}
		out = append(out, Instance{URL: in.url, Connected: in.connected, Err: in.err, Objects: objects, Ignored: in.ignored})
	}
	slices.SortFunc(out, func(x, y Instance) int { return strings.Compare(x.URL, y.URL) })
	return out
}

// inSum reports whether o is in the sum at now: its instance wrote it
// within WithStaleAfter.
func (a *Aggregator) inSum(o *object, now time.Time) bool { return now.Sub(o.seen) <= a.staleAfter }

// Handler returns the stream of the sum, for the Hystrix Dashboard or
// this module's dashboard: metricsstream's transport (Hystrix's headers,
// a frame at once and one every 500ms or ?delay=, the connection limit,
// [metricsstream.WithShutdown]) over [Aggregator.AppendEvents], ticking
// on the Aggregator's clock. opts are metricsstream's handler options.
func (a *Aggregator) Handler(opts ...metricsstream.HandlerOption) http.Handler {
	return metricsstream.EventsHandler(a, append([]metricsstream.HandlerOption{metricsstream.WithClock(a.clock)}, opts...)...)
}

// AppendEvents appends to dst the events of the sum as of now: one per
// type and name that an instance wrote in the last [WithStaleAfter], its
// HystrixCommand objects first, then HystrixThreadPool, HystrixCollapser
// and any other type, each in the order of its names; then, for as long
// as WithStaleAfter, a {"type", "name", "deleteData": "true"} event for
// each that no instance writes any more, as Turbine tells a dashboard to
// drop its card.
func (a *Aggregator) AppendEvents(dst []byte, now time.Time) []byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	groups := make(map[objectKey][]*object)
	for _, in := range a.instances {
		for k, o := range in.objects {
			if !a.inSum(o, now) {
				delete(in.objects, k)
				continue
			}
			groups[k] = append(groups[k], o)
		}
	}
	for k := range a.shown {
		if groups[k] == nil {
			delete(a.shown, k)
			a.gone[k] = now
		}
	}
	keys := make([]objectKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
		a.shown[k] = true
		delete(a.gone, k)
	}
	slices.SortFunc(keys, compareKeys)
	for _, k := range keys {
		// The instances' order, for fields that only some write.
		slices.SortFunc(groups[k], func(x, y *object) int { return strings.Compare(x.instance, y.instance) })
		dst = appendSum(dst, groups[k])
	}
	gone := make([]objectKey, 0, len(a.gone))
	for k, at := range a.gone {
		if now.Sub(at) > a.staleAfter {
			delete(a.gone, k)
			continue
		}
		gone = append(gone, k)
	}
	slices.SortFunc(gone, compareKeys)
	for _, k := range gone {
		dst = appendEventStart(dst, k)
		dst = append(dst, `,"deleteData":"true"}`+"\n\n"...)
	}
	return dst
}

// typeOrder is the order of Hystrix's types in a frame, as its stream
// writes them.
var typeOrder = map[string]int{"HystrixCommand": 1, "HystrixThreadPool": 2, "HystrixCollapser": 3}

// typeRank is the place of objects of type t in a frame: Hystrix's types
// in typeOrder's order, then every other.
func typeRank(t string) int {
	if r, ok := typeOrder[t]; ok {
		return r
	}
	return len(typeOrder) + 1
}

func compareKeys(x, y objectKey) int {
	if c := typeRank(x.typ) - typeRank(y.typ); c != 0 {
		return c
	}
	if c := strings.Compare(x.typ, y.typ); c != 0 {
		return c
	}
	return strings.Compare(x.name, y.name)
}

// Close stops asking its Discovery and reading every instance, and waits
// for their goroutines to end. The sum is then empty: streams of Handler
// go on with a deleteData event for each object they showed, for
// [WithStaleAfter], and then with empty frames, until their clients leave
// or [metricsstream.WithShutdown] ends them.
func (a *Aggregator) Close() error {
	a.stopDiscovery()
	a.mu.Lock()
	a.closed = true
	ins := a.instances
	a.instances = make(map[string]*instance)
	for _, in := range ins {
		in.cancel()
	}
	a.mu.Unlock()
	for _, in := range ins {
		<-in.done
	}
	return nil
}
