package command

import (
	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// HealthSourceFunc chooses the health stream the breaker of a key trips
// on. The registry calls it once per key, when the key is made, and uses
// the key's own metrics when it returns nil, as it does for every key
// when no WithHealthSource option is given. It is called with the
// registry's creation lock held: it must not call back into the registry.
type HealthSourceFunc func(KeyHealth) breaker.HealthSource

// KeyHealth is what a HealthSourceFunc knows of the key whose breaker it
// feeds.
type KeyHealth struct {
	// Key is the command key.
	Key string
	// Metrics are the key's own metrics, the default health source; a
	// source that adds other instances' health to it reads this
	// instance's from here.
	Metrics *metricsstream.CommandMetrics
	// Clock is the registry's clock, which the key's metrics and breaker
	// read; a source that ticks on its own ticks on it.
	Clock clock.Clock
	// Breaker returns the key's breaker configuration as it is now
	// (Configure changes it live), for a source that has more than one
	// view of health and must pick the one that trips (see
	// breaker.Config.Trips). It is safe to call from any goroutine.
	Breaker func() breaker.Config
}

type registryHealthSourceOption struct{ f HealthSourceFunc }

func (o registryHealthSourceOption) applyRegistry(r *Registry) { r.healthSource = o.f }

// WithHealthSource makes the registry ask f for the health source of
// each new key's breaker: a fleet-wide source for the keys that opt in
// (see package fleet), the key's own metrics, as in Hystrix, for the
// others. The registry does not close the sources f returns; whoever
// made them does.
func WithHealthSource(f HealthSourceFunc) RegistryOption { return registryHealthSourceOption{f} }

// healthSourceOf returns the health source of k's breaker: what the
// registry's HealthSourceFunc chooses, else k's metrics.
func (r *Registry) healthSourceOf(k *keyState) breaker.HealthSource {
	if r.healthSource == nil {
		return k.metrics
	}
	h := r.healthSource(KeyHealth{
		Key:     k.key,
		Metrics: k.metrics,
		Clock:   r.clock,
		Breaker: func() breaker.Config { return k.config.Load().Breaker },
	})
	if h == nil {
		return k.metrics
	}
	return h
}
