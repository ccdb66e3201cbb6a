package observable

import "context"

// A Scheduler runs tasks, on whatever goroutine it chooses. Schedulers
// are safe for concurrent use.
type Scheduler interface {
	// Schedule arranges for task to run once. It returns an error, and
	// does not run task, if it cannot take the task (a full pool, say).
	// ctx is the context of the subscription the task belongs to: a
	// scheduler may drop a task whose ctx is done before it starts.
	Schedule(ctx context.Context, task func()) error
}

// SchedulerFunc adapts a function to Scheduler.
type SchedulerFunc func(ctx context.Context, task func()) error

// Schedule calls f(ctx, task).
func (f SchedulerFunc) Schedule(ctx context.Context, task func()) error { return f(ctx, task) }

// Immediate runs each task at once, on the goroutine that schedules it.
var Immediate Scheduler = immediate{}

type immediate struct{}

func (immediate) Schedule(_ context.Context, task func()) error {
	task()
	return nil
}

// NewGoroutine runs each task on a goroutine of its own, which ends when
// the task returns.
var NewGoroutine Scheduler = newGoroutine{}

type newGoroutine struct{}

func (newGoroutine) Schedule(_ context.Context, task func()) error {
	go task()
	return nil
}

// SubscribeOn returns an Observable that subscribes to o on sch: o's
// source runs, and for a synchronous source also emits, on the goroutine
// sch gives it. Subscribe returns once the task is scheduled. If sch
// refuses the task, the subscription fails with sch's error.
//
// It panics if sch is nil.
func (o Observable[T]) SubscribeOn(sch Scheduler) Observable[T] {
	if sch == nil {
		panic("observable: SubscribeOn with nil sch")
	}
	if s, ok := singleOf(o); ok {
		q := scheduledSingle[T]{s: s, sch: sch}
		if d, ok := s.(Discarder[T]); ok {
			// The values pass on unchanged: what nobody receives goes
			// back to s.
			return FromSingle[T](discardingScheduledSingle[T]{q, d})
		}
		return FromSingle[T](q)
	}
	return Observable[T]{src: sourceFunc[T](func(s *scope, down Observer[T]) {
		if err := sch.Schedule(s, func() { o.run(s, down) }); err != nil {
			down.OnError(err)
		}
	})}
}
