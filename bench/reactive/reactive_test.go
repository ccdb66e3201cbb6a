// Package reactive compares the reactive core of rxhystrix (package
// observable) with rxgo v2.5.0 on the same pipelines. Each benchmark has
// one sub-benchmark per library, named so that a report can pair them:
// BenchmarkDeferFirst/rxhystrix and BenchmarkDeferFirst/rxgo.
//
//	cd bench && go test -bench . -benchmem ./reactive/
//
// Every rxgo pipeline is consumed to the end, so that no rxgo goroutine
// outlives its iteration; TestMain checks that with goleak.
package reactive

import (
	"context"
	"testing"

	"github.com/reactivex/rxgo/v2"
	"github.com/rxhystrix/rxhystrix/observable"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// sink keeps results alive so the compiler cannot drop the work.
var sink any

// BenchmarkDeferFirst subscribes to a deferred source of one value and
// takes the first value: the shape of a command's ToObservable().First().
func BenchmarkDeferFirst(b *testing.B) {
	ctx := context.Background()
	b.Run("rxhystrix", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, err := observable.Defer(func() observable.Observable[int] {
				return observable.Just(1)
			}).First(ctx)
			if err != nil || v != 1 {
				b.Fatalf("First() = %v, %v; want 1, nil", v, err)
			}
		}
	})
	b.Run("rxgo", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			item, err := rxgo.Defer([]rxgo.Producer{func(ctx context.Context, next chan<- rxgo.Item) {
				rxgo.Of(1).SendContext(ctx, next)
			}}).First().Get()
			if err != nil || item.V != 1 {
				b.Fatalf("First().Get() = %v, %v; want 1, nil", item.V, err)
			}
		}
	})
}

func triple(v int) int  { return v * 3 }
func isEven(v int) bool { return v%2 == 0 }
func add(a, b int) int  { return a + b }
func eight() []int      { return []int{1, 2, 3, 4, 5, 6, 7, 8} }
func eightAny() []any   { return []any{1, 2, 3, 4, 5, 6, 7, 8} }
func wantJMF() []int    { return []int{6, 12, 18, 24} }

// equalAny reports whether rxgo's items vs are the ints want, in order.
func equalAny(vs []any, want []int) bool {
	if len(vs) != len(want) {
		return false
	}
	for i, v := range vs {
		if n, ok := v.(int); !ok || n != want[i] {
			return false
		}
	}
	return true
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// BenchmarkJustMapFilterToSlice runs eight values through a Map and a
// Filter and collects the four that pass.
func BenchmarkJustMapFilterToSlice(b *testing.B) {
	ctx := context.Background()
	want := []int{6, 12, 18, 24}
	b.Run("rxhystrix", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			vs, err := observable.Map(observable.Just(1, 2, 3, 4, 5, 6, 7, 8), triple).Filter(isEven).ToSlice(ctx)
			if err != nil || !equal(vs, want) {
				b.Fatalf("ToSlice() = %v, %v; want %v, nil", vs, err, want)
			}
		}
	})
	b.Run("rxgo", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			vs, err := rxgo.Just(1, 2, 3, 4, 5, 6, 7, 8)().
				Map(func(_ context.Context, v any) (any, error) { return triple(v.(int)), nil }).
				Filter(func(v any) bool { return isEven(v.(int)) }).
				ToSlice(0)
			if err != nil || !equalAny(vs, want) {
				b.Fatalf("ToSlice() = %v, %v; want %v, nil", vs, err, want)
			}
		}
	})
}

// BenchmarkMergeJust merges two one-value sources and collects both.
func BenchmarkMergeJust(b *testing.B) {
	ctx := context.Background()
	b.Run("rxhystrix", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			vs, err := observable.Merge(observable.Just(1), observable.Just(2)).ToSlice(ctx)
			if err != nil || len(vs) != 2 || vs[0]+vs[1] != 3 {
				b.Fatalf("ToSlice() = %v, %v; want two values", vs, err)
			}
		}
	})
	b.Run("rxgo", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			vs, err := rxgo.Merge([]rxgo.Observable{rxgo.Just(1)(), rxgo.Just(2)()}).ToSlice(0)
			if err != nil || !equalAny(vs, []int{1, 2}) && !equalAny(vs, []int{2, 1}) {
				b.Fatalf("ToSlice() = %v, %v; want two values", vs, err)
			}
		}
	})
}

// BenchmarkZip2 pairs two sources of two values and collects the sums.
func BenchmarkZip2(b *testing.B) {
	ctx := context.Background()
	want := []int{4, 6}
	b.Run("rxhystrix", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			vs, err := observable.Zip2(observable.Just(1, 2), observable.Just(3, 4), add).ToSlice(ctx)
			if err != nil || !equal(vs, want) {
				b.Fatalf("ToSlice() = %v, %v; want %v, nil", vs, err, want)
			}
		}
	})
	b.Run("rxgo", func(b *testing.B) {
		b.ReportAllocs()
		zip := func(_ context.Context, a, b any) (any, error) { return add(a.(int), b.(int)), nil }
		for b.Loop() {
			vs, err := rxgo.Just(1, 2)().ZipFromIterable(rxgo.Just(3, 4)(), zip).ToSlice(0)
			if err != nil || !equalAny(vs, want) {
				b.Fatalf("ToSlice() = %v, %v; want %v, nil", vs, err, want)
			}
		}
	})
}
