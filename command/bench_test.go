package command

// Benchmarks of the paths of one execution, in parallel on one key; the
// same paths side by side with the peers are in bench/peers.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
)

func BenchmarkExecuteSemaphore(b *testing.B) {
	r := NewRegistry()
	defer r.Close()
	c := New("BenchSemaphore", func(ctx context.Context, in int) (int, error) { return in, nil }, WithRegistry(r),
		WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: -1, MaxConcurrentRequests: 100}))
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if v, err := c.Execute(ctx, 1); v != 1 || err != nil {
				b.Fatal(v, err)
			}
		}
	})
}

var errBench = errors.New("zz")

func BenchmarkExecuteFailing(b *testing.B) {
	r := NewRegistry()
	defer r.Close()
	c := New("BenchFailing", func(ctx context.Context, in int) (int, error) { return 0, errBench }, WithRegistry(r),
		WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: -1, MaxConcurrentRequests: 100, Breaker: breaker.Config{RequestVolumeThreshold: 1 << 30}}))
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Execute(ctx, 1); !errors.Is(err, errBench) {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkExecuteShortCircuited(b *testing.B) {
	r := NewRegistry()
	defer r.Close()
	c := New("BenchOpen", func(ctx context.Context, in int) (int, error) { return 0, errBench }, WithRegistry(r),
		WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: -1, Breaker: breaker.Config{ForceOpen: true}}))
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Execute(ctx, 1); !errors.Is(err, ErrShortCircuited) {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkToObservableFirst(b *testing.B) {
	r := NewRegistry()
	defer r.Close()
	c := New("BenchObservable", func(ctx context.Context, in int) (int, error) { return in, nil }, WithRegistry(r),
		WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: -1, MaxConcurrentRequests: 100}))
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if v, err := c.ToObservable(ctx, 1).First(ctx); v != 1 || err != nil {
				b.Fatal(v, err)
			}
		}
	})
}

func BenchmarkExecutePool(b *testing.B) {
	r := NewRegistry()
	defer r.Close()
	if err := r.ConfigurePool("BenchPool", PoolConfig{CoreSize: 64}); err != nil {
		b.Fatal(err)
	}
	c := New("BenchPool", func(ctx context.Context, in int) (int, error) { return in, nil }, WithRegistry(r),
		WithConfig(Config{Pool: "BenchPool", Timeout: time.Second}))
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if v, err := c.Execute(ctx, 1); v != 1 || err != nil {
				b.Fatal(v, err)
			}
		}
	})
}
