package turbine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// A Discovery finds a cluster's instances: the URLs of their streams, as
// Turbine's InstanceDiscovery does. [WithDiscovery] makes an Aggregator
// ask it again and again; [DNS] and [SRV] find the instances by a DNS
// name, as a Kubernetes headless Service gives them, [Eureka] and
// [Consul] in those registries.
type Discovery interface {
	// Instances returns the URLs of the instances' streams now. ctx ends
	// when the Aggregator closes, or when the answer is overdue.
	Instances(ctx context.Context) ([]string, error)
}

// A WaitingDiscovery is a Discovery whose Instances, after its first
// answer, may wait for the instances to change before it answers, for
// no longer than MaxWait: a long poll, as Consul's blocking queries are.
// [WithDiscovery] asks it again as soon as it has answered, though no
// more than once every [WaitingDiscoveryGap], rather than every interval,
// so that a change is read as soon as the registry knows it; a question
// is overdue only after its interval and MaxWait.
type WaitingDiscovery interface {
	Discovery
	// MaxWait is the longest Instances waits for a change; 0 when it
	// does not wait, and is asked every interval.
	MaxWait() time.Duration
}

// WaitingDiscoveryGap is the least time between two questions of a
// [WaitingDiscovery] that answered: a registry whose answers change all
// the time (every health check, say) is asked once a second, not as
// fast as it answers. A change in between is in the next answer, which
// the registry gives at once.
const WaitingDiscoveryGap = time.Second

// DiscoveryFunc is a function that is a Discovery: a registry's client,
// a file of URLs read again.
type DiscoveryFunc func(ctx context.Context) ([]string, error)

// Instances calls f.
func (f DiscoveryFunc) Instances(ctx context.Context) ([]string, error) { return f(ctx) }

// WithDiscovery makes the Aggregator find its instances with d: at once
// when [New] returns, and then every interval on its clock. Each answer
// is given to [Aggregator.SetInstances], so that new instances are read
// and those gone leave the sum, and [Aggregator.Discovery] tells how the
// last one went. An answer that fails, that SetInstances refuses (a URL
// that is not http or https, one listed twice), or that is not there
// after interval, changes nothing: the instances found before are still
// read, as Turbine keeps them when its discovery fails, and an instance
// that is really gone shows as not connected. The instances given to New
// are read until the first answer. A [WaitingDiscovery] is asked again
// as soon as it answers (see WaitingDiscoveryGap), and again after
// interval when it fails.
//
// It panics if d is nil or interval is not positive.
func WithDiscovery(d Discovery, interval time.Duration) Option {
	if d == nil {
		panic("turbine: WithDiscovery with nil Discovery")
	}
	if interval <= 0 {
		panic(fmt.Sprintf("turbine: WithDiscovery: interval %v is not positive", interval))
	}
	var maxWait time.Duration
	if w, ok := d.(WaitingDiscovery); ok {
		maxWait = max(w.MaxWait(), 0)
	}
	return optionFunc(func(a *Aggregator) {
		a.discovery = &discovery{Discovery: d, interval: interval, maxWait: maxWait}
	})
}

// DiscoveryStatus is what an Aggregator knows of its Discovery.
type DiscoveryStatus struct {
	// Interval is the time between two discoveries.
	Interval time.Duration
	// MaxWait is, for a [WaitingDiscovery], the longest a discovery
	// waits for a change: such a discovery is asked again as soon as it
	// answers, and after Interval only when it fails. Zero for any
	// other.
	MaxWait time.Duration
	// Found is when a discovery last found the instances; zero before
	// the first that did.
	Found time.Time
	// Err is why the last discovery failed, or nil if it found the
	// instances.
	Err error
	// Failures counts the discoveries that failed, since New.
	Failures int64
}

// ErrDiscoveryOverdue is the error of a discovery that gave no answer
// within its interval (and, for a [WaitingDiscovery], its MaxWait).
var ErrDiscoveryOverdue = errors.New("turbine: the discovery gave no answer within its interval")

// discovery is an Aggregator's Discovery and what it knows of it; the
// status is the Aggregator's, under its lock.
type discovery struct {
	Discovery
	interval time.Duration
	maxWait  time.Duration      // a WaitingDiscovery's MaxWait; 0 for any other
	cancel   context.CancelFunc // makes discover return
	done     chan struct{}      // closed when discover returns
	status   DiscoveryStatus
}

// Discovery returns how the Aggregator's Discovery goes, and false if it
// has none ([WithDiscovery]).
func (a *Aggregator) Discovery() (DiscoveryStatus, bool) {
	if a.discovery == nil {
		return DiscoveryStatus{}, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.discovery.status
	s.Interval, s.MaxWait = a.discovery.interval, a.discovery.maxWait
	return s, true
}

// startDiscovery starts asking the Aggregator's Discovery, if it has one.
func (a *Aggregator) startDiscovery() {
	d := a.discovery
	if d == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel, d.done = cancel, make(chan struct{})
	go a.discover(ctx, d)
}

// discover asks d for the instances until ctx ends: at once, and then
// every interval, or, for a WaitingDiscovery that answered, after
// WaitingDiscoveryGap.
func (a *Aggregator) discover(ctx context.Context, d *discovery) {
	defer close(d.done)
	for {
		err := a.discoverOnce(ctx, d)
		if ctx.Err() != nil {
			return // closed: what the discovery said no longer matters
		}
		if err != nil { // a discovery that found the instances said so as it read them
			a.mu.Lock()
			d.status.Err = err
			d.status.Failures++
			a.mu.Unlock()
		}
		pause := d.interval
		if err == nil && d.maxWait > 0 {
			pause = min(pause, WaitingDiscoveryGap)
		}
		if !a.wait(ctx, pause) {
			return
		}
	}
}

// discoverOnce asks d for the instances once, and reads those it finds.
func (a *Aggregator) discoverOnce(ctx context.Context, d *discovery) error {
	bound := d.interval + d.maxWait
	if bound < d.interval {
		bound = math.MaxInt64 // a MaxWait too long to add
	}
	askCtx, cancel := a.clock.WithTimeout(ctx, bound)
	urls, err := d.Instances(askCtx)
	overdue := ctx.Err() == nil && askCtx.Err() != nil
	cancel() // the ask's timer is stopped before its answer shows
	if overdue {
		return fmt.Errorf("%w (%v)", ErrDiscoveryOverdue, bound)
	}
	if err != nil {
		return fmt.Errorf("turbine: discovery: %w", err)
	}
	return a.setInstances(urls, d)
}

// stopDiscovery stops asking the Aggregator's Discovery, if it has one,
// and waits until it is no longer asked.
func (a *Aggregator) stopDiscovery() {
	if d := a.discovery; d != nil {
		d.cancel()
		<-d.done
	}
}
