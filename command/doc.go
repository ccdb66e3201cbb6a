// Package command wraps calls to downstream dependencies in Hystrix
// commands: each call goes through a circuit breaker, an isolation
// compartment (a worker pool or a semaphore), a timeout and a fallback,
// and everything that happens is recorded in the key's metrics.
//
// A [Command] is made once per dependency call site and executed many
// times:
//
//	getUser := command.New("GetUser", func(ctx context.Context, id int) (User, error) {
//		return client.User(ctx, id)
//	}).WithFallback(func(ctx context.Context, id int, err error) (User, error) {
//		return User{ID: id, Name: "anonymous"}, nil
//	})
//	u, err := getUser.Execute(ctx, 42)
//
// # Built as Hystrix 1.5
//
// Every way of executing a command runs one implementation of Hystrix's
// AbstractCommand.toObservable stages (stages.go maps each to Hystrix's
// applyHystrixSemantics, executeCommandWithSpecifiedIsolation,
// handleFallback and the terminal cleanup): the breaker's
// AttemptExecution, the execution permit, the user's code on a pool
// worker or the caller's goroutine under a timeout, the events and the
// breaker's verdict, the fallback under its own permit, and a terminal
// stage that publishes exactly one Completion and gives back every permit
// on completion, error and unsubscribe alike.
//
// [Command.ToObservable] is a cold Observable whose source is an
// [observable.Single]: [observable.Observable.First] of it runs the
// execution on the caller's goroutine, and [Command.Execute] is exactly
// that call, ToObservable(ctx, in).First(ctx), made without building the
// Observable (it allocates nothing on a passing semaphore-isolated call).
// [Command.Queue] is ToObservable(...).ToFuture, [Command.Observe] is
// Hystrix's observe (eager, replayed, and cancelled when every subscriber
// has left before the result); both return at once, the semaphore-isolated
// execution running on a goroutine of its own. An [ObservableCommand] runs
// the same stages around an Observable of any number of values.
//
// Commands of one key share one breaker, one metrics and one pair of
// semaphores (in a [Registry]; the package-level functions use
// DefaultRegistry). The first Config seen for a key holds until
// [Configure] changes it, live.
//
// # Request context: cache, log and collapsing
//
// [WithRequestContext] is Hystrix's HystrixRequestContext: a context that
// carries it scopes a request cache, a request log ([RequestLogFrom]) and
// the batches of RequestScope collapsers, for every command executed with
// it. A command with [WithCacheKey] runs once per cache key and request
// context; later executions, concurrent ones included, are served its
// response, errors and rejections too, and record RESPONSE_FROM_CACHE
// (the metrics count the response once, as Hystrix's do). A [Collapser]
// sends the requests of a short window to a batch function as one call,
// run as a command of its own key whose Completion counts COLLAPSED once
// per request.
//
// # Where Go differs from the JVM
//
//   - Threads cannot be interrupted. A pool-isolated caller returns at the
//     timeout, and run's context is cancelled then; run keeps its worker
//     until it returns, so a pool of CoreSize workers never runs more than
//     CoreSize calls of user code at once, however many time out (a Hystrix
//     thread likewise stays busy). A semaphore-isolated run gets the
//     timeout as its context's deadline; as in Hystrix, the caller is held
//     until run returns, and the execution is then recorded as TIMEOUT and
//     the fallback's value returned.
//   - Under a timeout, run's context has the deadline start+Timeout. When
//     the caller's context can never be cancelled (context.Background and
//     the like), it is a light context of this package: its Err tells the
//     deadline by the clock, it arms a timer only when somebody waits on
//     its Done, and contexts derived from it follow it without a goroutine
//     (it has the AfterFunc method context.AfterFunc looks for). Any other
//     caller's context is wrapped by context.WithTimeout, as usual, so
//     run's context ends with it and context.Cause tells why.
//   - Semaphore isolation's permits are the key's concurrent executions
//     (they coincide in Hystrix): taking one counts the execution as
//     started, in one atomic add.
//   - Workers are goroutines started on demand, at most CoreSize per pool;
//     a worker that finds no queued run exits, so idle pools hold no
//     goroutine. A run that nothing can end early (Timeout negative, and a
//     caller's context that is never done, as context.Background) runs on
//     its caller's goroutine when a slot is free, holding the slot and
//     counted by the pool as any other: its caller would wait for it in
//     any case, and the hand-off would only add cost. A caller whose run
//     went to a worker yields to the scheduler once in 16 runs on average:
//     a caller and the worker it starts wake each other on one time slice,
//     and without the yield the goroutines queued behind them on a busy
//     processor waited up to a second (see bench/peers BenchmarkTail).
//     The pool's metrics report its slots in use as its active count.
//     Pools named per call by WithPoolKey are retired after
//     PoolConfig.IdleTimeout (one minute by default) without work: the
//     memory kept is bounded by the pool keys used within that time.
//   - Exceptions are errors and panics. A panic in run or in a fallback is
//     recovered and recorded as FAILURE (or FALLBACK_FAILURE), with its
//     value and stack in a *PanicError. BadRequest(err) is Hystrix's
//     HystrixBadRequestException: BAD_REQUEST, no fallback, not counted in
//     health, returned as it is.
//   - Key functions fail as errors too (a *KeyFuncError). A WithPoolKey
//     function that panics or returns an empty key or one that is not
//     valid UTF-8 fails the execution as run would: FAILURE, counted in
//     health, with the fallback applied. A WithCacheKey function that
//     panics fails the call before the execution begins, as an exception
//     in Hystrix's getCacheKey: nothing is recorded and no fallback runs.
//   - Keys are text. A command, collapser or pool key that is empty or not
//     valid UTF-8 is refused where it enters (ErrInvalidKey): New and its
//     kin panic naming it, Configure, ConfigurePool and Do return the
//     error.
//   - A nil context means context.Background at every entry point, as in
//     package observable.
//   - Bad configuration is refused with a message that names what is
//     wrong, in one of two ways: the constructors and options (New,
//     NewObservable, NewCollapser, WithConfig, WithIsolation, ...) panic,
//     as regexp.MustCompile does, since what they are given is fixed in
//     the program; whatever changes configuration at run time (Configure,
//     ConfigurePool, the Registry's and the package-level alike) returns
//     an error.
//   - Unsubscribing is cancelling: when the caller's context ends, a
//     Future is cancelled or a subscriber unsubscribes before a terminal
//     event, the execution is recorded as CANCELLED, run's context is
//     cancelled, and a half-open breaker re-opens (Hystrix 1.5.13).
//   - A half-open trial that is rejected by the semaphore, cancelled or
//     panics re-opens the breaker; one that ends in a bad request frees the
//     trial for the next caller. The breaker is never left half-open with no
//     trial in flight.
//   - The request context travels in the context, not in thread-locals:
//     pools and fallbacks see it because they see the caller's context
//     values. Until a request context or a cache key exists, executions do
//     not look for one; afterwards each execution makes one
//     context.Value lookup.
//   - A response shared through the request cache comes from one
//     execution that runs on a context of its own: it goes on while any
//     caller waits, whichever caller leaves first, and is recorded once,
//     with what happened to it (Hystrix records CANCELLED on the first
//     command object even when its execution goes on for others). When
//     every caller has left, it is cancelled and leaves the cache, so the
//     next caller runs the command again instead of waiting for ever.
//   - The request log records an execution when it ends, not when it
//     starts, so it lists executions in the order they ended.
//   - A collapser's window opens with the first request of a batch and
//     closes Delay later (Hystrix ticks every Delay, so a request waits
//     between 0 and Delay); a batch that reaches MaxRequestsInBatch starts
//     at once. A request-scoped collapser needs a request context
//     (ErrNoRequestContext), and when its request context ends the
//     requests still waiting fail with ErrRequestContextDone, as Hystrix
//     fails them with "Requests not executed before shutdown".
package command
