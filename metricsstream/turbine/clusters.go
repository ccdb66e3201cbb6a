package turbine

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/rxhystrix/rxhystrix/internal/queryparam"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// DefaultCluster is the cluster of a request to [ClusterHandler] that
// names none, as Turbine's.
const DefaultCluster = "default"

// ClusterHandler serves the sums of several clusters from one path, as
// Turbine serves turbine.stream?cluster=NAME (the URL the Hystrix
// Dashboard's first page asks for): each request gets the stream of
// [Aggregator.Handler] of the cluster its query parameter "cluster"
// names, [DefaultCluster] when it names none; only the first such
// parameter counts, and one whose escapes do not read is answered 400
// Bad Request. A request for a cluster that is not in clusters is
// answered 404 Not Found, with a message that names it and the clusters
// there are. opts are every stream's
// metricsstream handler options; each cluster has a connection limit of
// its own.
//
//	mux.Handle("/turbine.stream", turbine.ClusterHandler(map[string]*turbine.Aggregator{
//		"api": apiInstances, "batch": batchInstances,
//	}))
//
// The clusters are those of the map when ClusterHandler is called. It
// panics on an empty name or a nil Aggregator: a cluster that no request
// can name, or that has nothing to serve.
func ClusterHandler(clusters map[string]*Aggregator, opts ...metricsstream.HandlerOption) http.Handler {
	handlers := make(map[string]http.Handler, len(clusters))
	for name, a := range clusters {
		if name == "" || a == nil {
			panic(fmt.Sprintf("turbine: ClusterHandler: cluster %q has an empty name or a nil Aggregator", name))
		}
		handlers[name] = a.Handler(opts...)
	}
	names := strings.Join(slices.Sorted(maps.Keys(handlers)), ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, _, err := queryparam.First(r.URL.RawQuery, "cluster")
		if err != nil {
			http.Error(w, "turbine: "+err.Error(), http.StatusBadRequest)
			return
		}
		if name == "" {
			name = DefaultCluster
		}
		h, ok := handlers[name]
		if !ok {
			http.Error(w, fmt.Sprintf("turbine: no cluster %q; the clusters are: %s", name, names), http.StatusNotFound)
			return
		}
		h.ServeHTTP(w, r)
	})
}
