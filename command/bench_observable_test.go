package command

import (
	"context"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/observable"
)

// BenchmarkObservableCommand subscribes an ObservableCommand of one
// value, semaphore-isolated: plain, with a timeout, retried (no retry
// happens) and hedged (the hedge's delay is never reached), by First and
// by ToSlice, which sees the stream to its end.
func BenchmarkObservableCommand(b *testing.B) {
	for _, bc := range []struct {
		name string
		cfg  Config
	}{
		{"plain", Config{}},
		{"timeout", Config{Timeout: time.Second}},
		{"retry", Config{Retry: RetryConfig{MaxAttempts: 3}}},
		{"hedge", Config{Hedge: HedgeConfig{MaxHedges: 1, Delay: time.Second}}},
	} {
		for _, by := range []string{"First", "ToSlice"} {
			b.Run(bc.name+"/"+by, func(b *testing.B) {
				r := NewRegistry()
				defer r.Close()
				cfg := bc.cfg
				cfg.Isolation, cfg.MaxConcurrentRequests = SemaphoreIsolation, 1000
				if cfg.Timeout == 0 {
					cfg.Timeout = -1
				}
				c := NewObservable("BenchObservableCommand", func(ctx context.Context, in int) observable.Observable[int] {
					return observable.Just(in)
				}, WithRegistry(r), WithConfig(cfg))
				ctx := context.Background()
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if by == "First" {
							if v, err := c.ToObservable(ctx, 1).First(ctx); v != 1 || err != nil {
								b.Fatal(v, err)
							}
						} else if vs, err := c.ToObservable(ctx, 1).ToSlice(ctx); len(vs) != 1 || err != nil {
							b.Fatal(vs, err)
						}
					}
				})
			})
		}
	}
}
