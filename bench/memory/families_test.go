package memory

import (
	"context"
	"testing"

	"github.com/afex/hystrix-go/hystrix"
	"github.com/cep21/circuit/v4"
	hystrixclosers "github.com/cep21/circuit/v4/closers/hystrix"
	"github.com/cep21/circuit/v4/metrics/rolling"
)

func passes(context.Context) error { return nil }

// hystrixGoFamily makes each key by calling hystrix.Do on a new name; its
// release is hystrix.Flush, which drops the circuits but neither their
// settings nor their two monitor goroutines.
func hystrixGoFamily() keyFamily {
	return keyFamily{
		name: "hystrix-go",
		open: func(tb testing.TB, _ int) (func(context.Context, string), func()) {
			run := func() error { return nil }
			create := func(_ context.Context, name string) {
				if err := hystrix.Do(name, run, nil); err != nil {
					tb.Fatalf("hystrix.Do(%q): %v", name, err)
				}
			}
			return create, hystrix.Flush
		},
	}
}

// cep21Family makes each key with a Manager built by manager; release
// drops the Manager.
func cep21Family(name string, manager func() *circuit.Manager) keyFamily {
	return keyFamily{
		name: name,
		open: func(tb testing.TB, _ int) (func(context.Context, string), func()) {
			m := manager()
			create := func(ctx context.Context, name string) {
				if err := m.MustCreateCircuit(name).Execute(ctx, passes, nil); err != nil {
					tb.Fatalf("Execute on %q: %v", name, err)
				}
			}
			return create, func() { m = nil }
		},
	}
}

// cep21DefaultFamily is a Manager with no configuration: no stats, a
// circuit that never opens, the default 1 s timeout.
func cep21DefaultFamily() keyFamily {
	return cep21Family("cep21-default", func() *circuit.Manager { return &circuit.Manager{} })
}

// cep21HystrixFamily adds cep21's rolling stats and Hystrix opener and
// closer to every circuit.
func cep21HystrixFamily() keyFamily {
	return cep21Family("cep21-hystrix", func() *circuit.Manager {
		stats := &rolling.StatFactory{}
		closers := &hystrixclosers.Factory{}
		return &circuit.Manager{
			DefaultCircuitProperties: []circuit.CommandPropertiesConstructor{stats.CreateConfig, closers.Configure},
		}
	})
}
