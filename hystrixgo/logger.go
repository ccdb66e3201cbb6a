package hystrix

import "sync/atomic"

// logger is what SetLogger takes: anything with Printf, such as a
// *log.Logger.
type logger interface {
	Printf(format string, items ...interface{})
}

// NoopLogger is a logger that drops everything.
type NoopLogger struct{}

// Printf does nothing.
func (NoopLogger) Printf(format string, items ...interface{}) {}

// DefaultLogger is the logger in use until SetLogger is called.
var DefaultLogger = NoopLogger{}

// loggerBox holds the logger in an atomic.Value, whose values must share
// one concrete type.
type loggerBox struct{ logger }

var currentLogger atomic.Value // loggerBox

// SetLogger sets where the package logs what it cannot return, such as a
// configuration that rxhystrix refuses.
func SetLogger(l logger) { currentLogger.Store(loggerBox{l}) }

func logf(format string, items ...interface{}) {
	if b, ok := currentLogger.Load().(loggerBox); ok && b.logger != nil {
		b.Printf(format, items...)
		return
	}
	DefaultLogger.Printf(format, items...)
}
