package metricsstream

import (
	"net/http"
	"time"
)

// DefaultUtilizationStreamInterval is how often [UtilizationHandler]'s
// stream writes (hystrix.stream.utilization.intervalInMilliseconds).
const DefaultUtilizationStreamInterval = 500 * time.Millisecond

// UtilizationHandler returns the utilization stream of a [Registry],
// Hystrix 1.5's /hystrix/utilization.stream (HystrixUtilizationSseServlet):
// every interval (500ms unless [WithInterval] or the request's ?delay=
// says otherwise) one event "data: " + a "HystrixUtilization" object +
// "\n\n", then a ping.
//
//	mux.Handle("/hystrix/utilization.stream", metricsstream.UtilizationHandler())
//
// The object holds, keyed by name, how busy each command of the registry
// is now ("commands": "activeCount", its executions in flight) and each
// worker pool ("threadpools": "activeCount", "queueSize", "corePoolSize"
// and "poolSize", the last two from the pool's status provider, 0 without
// one). It is the cheap stream to poll for saturation: it reads counters,
// not windows. Every pool of the registry is listed, as in Hystrix.
//
// Transport, connection limit, ?delay=, shutdown and the options are as
// for [Handler]; the first event is written as soon as a client connects.
// [WithCollapsers] changes nothing here.
func UtilizationHandler(opts ...HandlerOption) http.Handler {
	return newHandler("UtilizationHandler", (*frame).appendUtilization, DefaultUtilizationStreamInterval, opts)
}

// appendUtilization appends the one "HystrixUtilization" event of a frame:
// SerialHystrixUtilization's object.
func (f *frame) appendUtilization(h *handler, b []byte) []byte {
	f.sortedKeys(h.registry)
	b = append(b, "data: "...)
	o := beginObject(b)
	o.string("type", "HystrixUtilization")
	commands := o.open("commands")
	for _, m := range f.commands {
		c := commands.open(m.key)
		c.int("activeCount", m.ConcurrentExecutions())
		commands.close(&c)
	}
	o.close(&commands)
	pools := o.open("threadpools")
	for _, p := range f.pools {
		st, _ := p.Status()
		po := pools.open(p.key)
		po.int("activeCount", p.ActiveCount())
		po.int("queueSize", p.QueueSize())
		po.int("corePoolSize", int64(st.CoreSize))
		po.int("poolSize", int64(st.PoolSize))
		pools.close(&po)
	}
	o.close(&pools)
	b = o.end()
	return append(b, "\n\n"...)
}
