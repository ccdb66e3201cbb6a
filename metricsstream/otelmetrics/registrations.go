package otelmetrics

import (
	"errors"
	"reflect"
	"sync"

	"go.opentelemetry.io/otel/metric"
)

// ErrAlreadyRegistered is the error of [Metrics.Register] and
// [RegisterTurbine] on a meter what they read is registered on already: a
// second callback would observe every counter again, and the meter would
// sum the two.
var ErrAlreadyRegistered = errors.New("otelmetrics: already registered on this meter")

// registrations are the callbacks of one kind registered and not yet
// unregistered, by a key that names what they read and the meter they are
// on, so that a second one can be refused.
type registrations struct {
	mu   sync.Mutex
	keys map[any]bool
}

// register registers callback on meter for observables under key, or
// returns ErrAlreadyRegistered if key is registered already. A key that
// cannot be a map key (a meter or a source whose type cannot be compared;
// no meter of the SDK's) is not checked.
func (rs *registrations) register(key any, meter metric.Meter, callback metric.Callback, observables ...metric.Observable) (metric.Registration, error) {
	if !reflect.ValueOf(key).Comparable() {
		return meter.RegisterCallback(callback, observables...)
	}
	if !rs.claim(key) {
		return nil, ErrAlreadyRegistered
	}
	r, err := meter.RegisterCallback(callback, observables...)
	if err != nil {
		rs.release(key)
		return r, err
	}
	return &registration{Registration: r, rs: rs, key: key}, nil
}

// claim notes key, and reports false if it is noted already.
func (rs *registrations) claim(key any) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.keys[key] {
		return false
	}
	if rs.keys == nil {
		rs.keys = make(map[any]bool)
	}
	rs.keys[key] = true
	return true
}

// release undoes claim.
func (rs *registrations) release(key any) {
	rs.mu.Lock()
	delete(rs.keys, key)
	rs.mu.Unlock()
}

// registration is a Registration whose key is noted: its first
// Unregister releases the key.
type registration struct {
	metric.Registration
	once sync.Once
	rs   *registrations
	key  any
}

func (r *registration) Unregister() error {
	err := r.Registration.Unregister()
	r.once.Do(func() { r.rs.release(r.key) })
	return err
}
