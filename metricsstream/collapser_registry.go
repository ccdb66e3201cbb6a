package metricsstream

import (
	"fmt"
	"iter"
)

// Collapser returns the metrics of the collapser key, creating them with
// cfg if the key has none (of cfg, RollingWindow, Buckets,
// PercentileWindow, PercentileBuckets and PercentileDisabled apply). It
// panics as [Registry.Pool] does. Collapser metrics are never evicted.
func (r *Registry) Collapser(key string, cfg Config) *CollapserMetrics {
	if m, ok := r.collapsers.Load(key); ok {
		return m.(*CollapserMetrics)
	}
	if key == "" {
		panic("metricsstream: Registry.Collapser with empty key")
	}
	if err := cfg.validateWithoutHealth(); err != nil {
		panic(fmt.Sprintf("metricsstream: Registry.Collapser(%q): %v", key, err))
	}
	m, _ := r.collapsers.LoadOrStore(key, newCollapserMetrics(key, cfg, r.clock))
	return m.(*CollapserMetrics)
}

// LookupCollapser returns the metrics of the collapser key, if it has any.
func (r *Registry) LookupCollapser(key string) (*CollapserMetrics, bool) {
	m, ok := r.collapsers.Load(key)
	if !ok {
		return nil, false
	}
	return m.(*CollapserMetrics), true
}

// Collapsers iterates over the metrics of every collapser key, in no
// particular order.
func (r *Registry) Collapsers() iter.Seq[*CollapserMetrics] {
	return func(yield func(*CollapserMetrics) bool) {
		r.collapsers.Range(func(_, m any) bool { return yield(m.(*CollapserMetrics)) })
	}
}

// CollapserSnapshots iterates over the snapshots of every collapser key,
// each taken when the iteration reaches it. (A [Handler] streams the
// registry's collapsers without being told; CollapserSnapshots suits a
// [CollapserSource] that adds the collapsers of this registry to the
// stream of another.)
func (r *Registry) CollapserSnapshots() iter.Seq[CollapserSnapshot] {
	return func(yield func(CollapserSnapshot) bool) {
		for m := range r.Collapsers() {
			if !yield(m.Snapshot()) {
				return
			}
		}
	}
}
