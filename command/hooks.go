package command

import (
	"context"
	"sync/atomic"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// ExecutionHook is told of each step of every execution of the commands it
// is registered for, as Hystrix's HystrixCommandExecutionHook. Methods are
// called on the goroutine doing the step; a hook must not block. A
// panicking hook is recovered and ignored: it never breaks a command.
// Embed NoOpHook to implement only some methods.
type ExecutionHook interface {
	// Start: the execution begins, before the breaker is asked.
	Start(key string)
	// ExecutionStart: run is about to be called.
	ExecutionStart(key string)
	// ExecutionSuccess: run returned a value (an ObservableCommand's
	// construct completed).
	ExecutionSuccess(key string)
	// ExecutionError: run failed, timed out or reported a bad request.
	ExecutionError(key string, err error)
	// FallbackStart: the fallback is about to be called.
	FallbackStart(key string)
	// FallbackSuccess: the fallback produced a value.
	FallbackSuccess(key string)
	// FallbackError: the fallback failed.
	FallbackError(key string, err error)
	// Success: the command produced a value, from run or the fallback.
	Success(key string)
	// Error: the command ends with err.
	Error(key string, failure FailureType, err error)
	// CacheHit: the value was served from the request cache.
	CacheHit(key string)
	// Unsubscribe: the caller went away before the command ended.
	Unsubscribe(key string)
}

// NoOpHook implements ExecutionHook with methods that do nothing.
type NoOpHook struct{}

func (NoOpHook) Start(string)                     {}
func (NoOpHook) ExecutionStart(string)            {}
func (NoOpHook) ExecutionSuccess(string)          {}
func (NoOpHook) ExecutionError(string, error)     {}
func (NoOpHook) FallbackStart(string)             {}
func (NoOpHook) FallbackSuccess(string)           {}
func (NoOpHook) FallbackError(string, error)      {}
func (NoOpHook) Success(string)                   {}
func (NoOpHook) Error(string, FailureType, error) {}
func (NoOpHook) CacheHit(string)                  {}
func (NoOpHook) Unsubscribe(string)               {}

var _ ExecutionHook = NoOpHook{}

// EventNotifier is told of each event the moment it happens, as Hystrix's
// HystrixEventNotifier.markEvent: before the execution's Completion is
// published. It must not block; a panic in it is recovered and ignored.
type EventNotifier interface {
	Notify(key string, event metricsstream.EventType)
}

// EventNotifierFunc adapts a function to EventNotifier.
type EventNotifierFunc func(key string, event metricsstream.EventType)

// Notify calls f.
func (f EventNotifierFunc) Notify(key string, event metricsstream.EventType) { f(key, event) }

// plugins is an immutable set of hooks and notifiers; a new set replaces
// the old one atomically.
type plugins struct {
	hooks     []ExecutionHook
	notifiers []EventNotifier
}

// pluginSet holds the plugins of a registry or of a key.
type pluginSet struct{ p atomic.Pointer[plugins] }

// addHook adds h; a nil h panics here, where it would otherwise panic,
// recovered, at every step of every execution.
func (s *pluginSet) addHook(h ExecutionHook) {
	if h == nil {
		panic("command: a nil ExecutionHook")
	}
	for {
		old := s.p.Load()
		next := &plugins{}
		if old != nil {
			*next = plugins{hooks: append(old.hooks[:len(old.hooks):len(old.hooks)], h), notifiers: old.notifiers}
		} else {
			next.hooks = []ExecutionHook{h}
		}
		if s.p.CompareAndSwap(old, next) {
			return
		}
	}
}

// addNotifier adds n; a nil n panics here, as a nil hook does.
func (s *pluginSet) addNotifier(n EventNotifier) {
	if f, isFunc := n.(EventNotifierFunc); n == nil || isFunc && f == nil {
		panic("command: a nil EventNotifier")
	}
	for {
		old := s.p.Load()
		next := &plugins{}
		if old != nil {
			*next = plugins{hooks: old.hooks, notifiers: append(old.notifiers[:len(old.notifiers):len(old.notifiers)], n)}
		} else {
			next.notifiers = []EventNotifier{n}
		}
		if s.p.CompareAndSwap(old, next) {
			return
		}
	}
}

// callHooks calls f on every hook of both sets, recovering panics.
func callHooks(global, local *plugins, f func(ExecutionHook)) {
	for _, set := range [2]*plugins{global, local} {
		if set == nil {
			continue
		}
		for _, h := range set.hooks {
			safeHook(h, f)
		}
	}
}

func safeHook(h ExecutionHook, f func(ExecutionHook)) {
	defer func() { _ = recover() }()
	f(h)
}

// notify tells every notifier of both sets of event.
func notify(global, local *plugins, key string, event metricsstream.EventType) {
	for _, set := range [2]*plugins{global, local} {
		if set == nil {
			continue
		}
		for _, n := range set.notifiers {
			safeNotify(n, key, event)
		}
	}
}

func safeNotify(n EventNotifier, key string, event metricsstream.EventType) {
	defer func() { _ = recover() }()
	n.Notify(key, event)
}

var _ = context.Background
