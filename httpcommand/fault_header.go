package httpcommand

import (
	"fmt"

	"golang.org/x/net/http/httpguts"
)

// FaultHeader is the request header that carries a request's mark for
// fault injection (command.WithFaultInjection) from service to service,
// for [WithFaultHeader]: "*" marks the request for every key, and a
// comma-separated list of keys, each escaped as a URL path segment
// (url.PathEscape), for those keys.
//
//	Rxhystrix-Fault-Injection: GetUser,Province%2017
const FaultHeader = "Rxhystrix-Fault-Injection"

// FaultHeaderOption is what [WithFaultHeader] returns: an [Option] of
// [New] and a [RequestContextOption] of [RequestContext] at once.
type FaultHeaderOption struct{ name string }

// WithFaultHeader carries a request's mark for fault injection in the
// header name ([FaultHeader], say), so that a test request reaches, through
// every service of the call graph, the faults its commands inject into
// marked requests only (command.FaultConfig.MarkedOnly): Netflix's Failure
// Injection Testing marked its requests so.
//
// Given to [RequestContext], it marks the context of each request that has
// the header, as command.WithFaultInjection does; a request whose header
// is malformed is answered 400 Bad Request, naming the header, and not
// served. Given to [New], the Transport writes the header on each request
// whose context is marked (on a copy of its headers), for the downstream
// service to read.
//
// Anyone who can send a request can send the header: a service that
// honours it must take it only from clients it trusts, and strip it at
// its edge from the others.
//
// It panics if name is not a valid header field name.
func WithFaultHeader(name string) FaultHeaderOption {
	if !httpguts.ValidHeaderFieldName(name) { // net/http drops a bad name silently, when it writes it
		panic(fmt.Sprintf("httpcommand: WithFaultHeader: %q is not a valid header field name", name))
	}
	return FaultHeaderOption{name}
}

func (o FaultHeaderOption) apply(t *Transport) { t.faultHeader = o.name }

func (o FaultHeaderOption) applyRequestContext(h *requestContextHandler) { h.faultHeader = o.name }
