package observable

import (
	"context"
	"testing"
)

func BenchmarkDeferFirst(b *testing.B) {
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		v, err := Defer(func() Observable[int] { return Just(1) }).First(ctx)
		if v != 1 || err != nil {
			b.Fatal(v, err)
		}
	}
}

func BenchmarkJustMapFilterToSlice(b *testing.B) {
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		o := Map(Just(1, 2, 3, 4, 5, 6, 7, 8), func(v int) int { return v * 3 }).Filter(func(v int) bool { return v%2 == 0 })
		vs, err := o.ToSlice(ctx)
		if len(vs) != 4 || err != nil {
			b.Fatal(vs, err)
		}
	}
}

func BenchmarkMergeJust(b *testing.B) {
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		vs, err := Merge(Just(1), Just(2)).ToSlice(ctx)
		if len(vs) != 2 || err != nil {
			b.Fatal(vs, err)
		}
	}
}

func BenchmarkZip2(b *testing.B) {
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		vs, err := Zip2(Just(1, 2), Just(3, 4), func(a, b int) int { return a + b }).ToSlice(ctx)
		if len(vs) != 2 || err != nil {
			b.Fatal(vs, err)
		}
	}
}

func BenchmarkCommandShape(b *testing.B) {
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		o := Defer(func() Observable[int] { return Just(1) }).
			DoOnNext(func(int) {}).
			OnErrorResumeNext(func(error) Observable[int] { return Just(2) }).
			Finally(func() {})
		if v, err := o.First(ctx); v != 1 || err != nil {
			b.Fatal(v, err)
		}
	}
}
