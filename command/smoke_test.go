package command

import (
	"context"
	"errors"
	"testing"
)

func TestSmoke(t *testing.T) {
	r := NewRegistry()
	defer r.Close()
	c := New("Smoke", func(ctx context.Context, in int) (int, error) { return in * 2, nil }, WithRegistry(r))
	v, err := c.Execute(context.Background(), 21)
	if v != 42 || err != nil {
		t.Fatal(v, err)
	}
	v, err = c.ToObservable(context.Background(), 4).First(context.Background())
	if v != 8 || err != nil {
		t.Fatal(v, err)
	}
	f := New("SmokeFail", func(ctx context.Context, in int) (int, error) { return 0, errors.New("boom") }, WithRegistry(r),
		WithConfig(Config{Isolation: SemaphoreIsolation}),
		WithFallback(func(ctx context.Context, in int, err error) (int, error) { return -1, nil }))
	v, err = f.Execute(context.Background(), 1)
	if v != -1 || err != nil {
		t.Fatal(v, err)
	}
	v, err = f.ToObservable(context.Background(), 1).First(context.Background())
	if v != -1 || err != nil {
		t.Fatal(v, err)
	}
	t.Log(c.Metrics().CumulativeCounts(), f.Metrics().CumulativeCounts())
}
