package reading

import (
	"iter"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// Group returns the group a command is reported under: its group as the
// command package reports it, or its key when nothing reports one.
func Group(s metricsstream.CommandSnapshot) string {
	if s.Status.Group == "" {
		return s.Key
	}
	return s.Status.Group
}

// EventTypes yields every command event type an exporter counts, in
// order: all of them but COMMAND_MAX_ACTIVE, which nothing records (the
// rolling maximum of concurrent executions is a gauge of its own). A new
// event type of metricsstream is counted without more code.
func EventTypes() iter.Seq[metricsstream.EventType] {
	return func(yield func(metricsstream.EventType) bool) {
		for e := range metricsstream.NumEventTypes {
			if e == metricsstream.CommandMaxActive {
				continue
			}
			if !yield(e) {
				return
			}
		}
	}
}
