// Package metricsstream records what Hystrix records of every command
// execution and exposes it as numbers and as streams.
package metricsstream
