// Package breaker implements the Hystrix 1.5.13 circuit breaker, driven by a
// stream of health counts.
package breaker
