package observable

import (
	"context"
	"testing"
)

// The pipelines compared with rxgo are in bench/reactive; these are the
// shapes the other packages of rxhystrix build.

// BenchmarkCommandShape is the shape of a command execution: a deferred
// run, a tap that records the result, a fallback, a cleanup, First.
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

// BenchmarkSubjectOnNext is a metrics stream publishing to eight
// subscribers.
func BenchmarkSubjectOnNext(b *testing.B) {
	b.ReportAllocs()
	s := NewPublishSubject[int]()
	for range 8 {
		sub := s.Observable().SubscribeFunc(context.Background(), func(int) {}, nil, nil)
		defer sub.Unsubscribe()
	}
	for b.Loop() {
		s.OnNext(1)
	}
}
