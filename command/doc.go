// Package command runs calls to downstream dependencies as Hystrix
// commands: each call goes through a circuit breaker, an isolation
// compartment (a worker pool or a semaphore), a timeout and a fallback,
// and everything that happens is recorded in the key's metrics, which
// package metricsstream streams to a dashboard and to Prometheus.
//
// A [Command] is made once per call site and executed many times, from
// any number of goroutines:
//
//	getUser := command.New("GetUser", func(ctx context.Context, id int) (User, error) {
//		return client.User(ctx, id)
//	}).WithFallback(func(ctx context.Context, id int, err error) (User, error) {
//		return User{ID: id, Name: "anonymous"}, nil
//	})
//	u, err := getUser.Execute(ctx, 42)
//
// # Rules of use
//
//   - Commands of one key share one breaker, one metrics, one pair of
//     semaphores and, by default, one pool (in a [Registry]; the
//     package-level functions use [DefaultRegistry]). The first [Config]
//     seen for a key holds until [Configure] changes it, live, or
//     [Registry.ConfigureFunc] changes the fields it names. A key's
//     breaker trips on the key's own metrics, as in Hystrix, unless the
//     registry was made [WithHealthSource] and that chose another health
//     stream for the key (package fleet's, on the health of every instance
//     of the service). A breaker configured to throttle
//     (breaker.Config.ThrottleSuccessPercentage) refuses a share of the
//     executions while it is closed, as its health falls: each is
//     SHORT_CIRCUITED and answered by the fallback, as when it is open.
//   - [Command.Execute] waits for the result. [Command.Queue] returns a
//     Future at once, [Command.Observe] starts at once and replays the
//     result to every subscriber, [Command.ToObservable] is cold and runs
//     once per subscription, so that commands compose with package
//     observable. All four run the same stages and record the same events.
//   - The error of a failed execution is an [*Error] naming the
//     [FailureType]; test it with errors.Is against [ErrShortCircuited],
//     [ErrTimeout], [ErrPoolRejected] and the other sentinels, or with
//     errors.As. A run that returns [BadRequest](err) gets no fallback and
//     does not count against the breaker; its error is returned as it is.
//     [Command.WithBadRequests] picks the errors that are bad requests
//     among those run returns as they are (sql.ErrNoRows, say).
//     A panic in run or in a fallback is an error ([*PanicError]). A
//     panic downstream of a command's Observable (in a subscriber's
//     OnNext, or an operator's function) is the subscriber's: it
//     propagates, as package observable says, and the execution ends
//     CANCELLED, its permits back, with no FAILURE counted. Run and a
//     fallback must return, by value or by panic: one that ends its
//     goroutine with runtime.Goexit (testing's t.FailNow, called off the
//     test's goroutine) leaves its execution unended, its permit or pool
//     slot taken and a caller on another goroutine unanswered.
//   - The context is the cancellation. When the caller's context ends, a
//     Future is cancelled or every subscriber has left before the result,
//     the execution is CANCELLED and run's context is cancelled. A nil
//     context means context.Background.
//   - Under a timeout, run's context has the deadline, or the caller's if
//     that comes first (of the context given to ToObservable, Queue or
//     Observe, or of the subscriber's, whichever is earlier), and it ends
//     with the caller's context, with its error and cause, as a context of
//     context.WithTimeout would; it is cheaper to make (one small
//     allocation, its timer armed only when run waits on it). A pool-isolated
//     caller returns at the timeout; run keeps its worker until it returns,
//     so that a pool never runs more than CoreSize calls at once. A
//     semaphore-isolated run runs on the caller's goroutine, which it holds
//     until it returns (the execution is then TIMEOUT and the fallback
//     answers); Queue and Observe, which never block, answer at the
//     timeout.
//   - A [Command] is semaphore- or pool-isolated by [Config.Isolation];
//     its zero value, [DefaultIsolation], is the kind's default as in
//     Hystrix (a pool for a Command, a semaphore for an
//     [ObservableCommand]). [Command.WithPoolKey] runs each call in a pool
//     of its own key, such as one per downstream URL.
//   - Where Go differs: a value nobody receives (a run's that answered
//     past its timeout or after its caller left, a hedge's that lost) is
//     not only garbage; it may hold rows or a connection open.
//     [Command.WithDiscard] hands each such value to a function that
//     releases it, once, and so do the operators that drop a value of
//     the command's Observable (Zip2's other side failing);
//     [ObservableCommand.WithDiscard] does the same for the values of a
//     stream.
//     [Collapser.WithDiscard] does the same for a batch's results: one
//     whose every caller left once the batch had started, or a batch
//     that answered a wrong number of them.
//   - A pool's size and a semaphore's permits are fixed numbers by
//     default, as in Hystrix; [PoolConfig.AdaptiveLimit] and
//     [Config.AdaptiveLimit] make them an adaptive limit (package limit:
//     Vegas, Gradient2, AIMD) that each execution's latency and timeout
//     move, live-switchable. A call over the limit is THREAD_POOL_REJECTED
//     or SEMAPHORE_REJECTED and gets the fallback; the stream, the
//     dashboard and Prometheus show the limit where they show the size.
//     [Config.Partitions] guarantee shares of a semaphore's permits to
//     kinds of callers, named by [WithPartition] (live requests before
//     batch jobs), as concurrency-limits' partitioned limiter does.
//     [Config.Backlog] lets a call that finds every permit taken wait for
//     one, for a bounded time, newest first by default, as
//     concurrency-limits' LifoBlockingLimiter does, where Hystrix's
//     semaphore refuses it at once.
//   - Bad configuration is refused with a message naming what is wrong:
//     the constructors and options (New, NewObservable, NewCollapser,
//     WithConfig, ...) panic, as regexp.MustCompile does, since what they
//     are given is fixed in the program; whatever changes configuration at
//     run time (Configure, ConfigurePool) returns an error
//     ([ErrInvalidConfig]). Keys must be non-empty UTF-8 ([ErrInvalidKey]).
//   - Tests of a program's own commands run on a manual clock:
//     NewRegistry(WithClock(clock.NewManual(t0))) trips and recovers
//     breakers and times runs out without sleeping.
//
// # Request context: cache, log and collapsing
//
// [WithRequestContext] is Hystrix's HystrixRequestContext: a context that
// carries it scopes a request cache, a request log ([RequestLogFrom]) and
// the batches of RequestScope collapsers, for every command executed with
// it. A command with [Command.WithCacheKey] runs once per cache key and
// request context; later executions, concurrent ones included, are served
// its response, errors and rejections too, and record RESPONSE_FROM_CACHE
// (the metrics count the response once, as Hystrix's do). A [Collapser]
// sends the requests of a short window to a batch function as one call,
// run as a command of its own key whose Completion counts COLLAPSED once
// per request. When the request context's ctx ends, its log goes to the
// request events of the registries whose commands it logged, as Hystrix's
// goes to HystrixRequestEventsStream (metricsstream.RequestEventsHandler
// serves them), if somebody watched them while the request ran.
//
// # Retries, hedges and rate limits
//
// Hystrix's commands run once; rxhystrix's ToObservable is cold, so
// every subscription is a full execution with its own breaker check,
// permit, timeout, fallback and Completion, and retrying or hedging is
// what Rx does with a cold source: subscribe again, or race a delayed
// second subscription (observable's Retry and Hedge). Config turns them on
// per key, live, in every way of executing a Command:
//
//   - [Config.Retry] retries FAILURE and TIMEOUT (a short circuit or a
//     rejection only when RetryConfig.On says so, a bad request never)
//     after an exponential backoff with full jitter, and never past the
//     caller's deadline. A retry is recorded RETRIED.
//   - [Config.Hedge] starts another execution when one has not answered
//     after a delay, fixed or the key's live latency percentile; the first
//     success, or bad request, wins and the others are cancelled
//     (CANCELLED). A hedge is recorded HEDGED.
//   - The retry budget (RetryConfig.Budget, Envoy's) bounds a key's
//     retries and hedges in flight to a share of its executions in
//     flight; a retry counts from the moment it is granted, its backoff
//     included, as Envoy's does. What it refuses is recorded
//     RETRY_BUDGET_EXHAUSTED.
//   - The fallback runs once per call: for the attempt after which no
//     retry follows and no other attempt is left to answer. The attempts
//     before it record their failure and no fallback event.
//   - A call under [OneAttempt]'s context makes one execution, for work
//     that must not be repeated (a request that is not idempotent).
//   - [Config.RateLimit] is a token bucket after the breaker and before
//     the permits: a refusal is RATE_LIMITED, not
//     counted in health, and answered by the fallback. It rejects at once,
//     or waits up to MaxWait on the goroutine that admits the execution
//     (the caller's for Execute and First; Queue and Observe return at
//     once and the execution waits on its own); a caller that leaves
//     while it waits ends the execution CANCELLED, its place given back.
//
// An ObservableCommand's stream is retried, hedged and rate limited as a
// Command's call is, with two rules more: an attempt that has emitted a
// value is not retried (its retry would emit it again), and its fallback
// follows what it emitted; and hedges race for the first value, as gRPC's
// hedged streaming calls race for the first response, so the first
// execution to emit (or to complete) is the stream, and the others are
// cancelled.
//
// # Fault injection
//
// [Config.Faults] injects delays and errors into a key's executions, live,
// so that a team sees its timeout, fallback, breaker and isolation hold
// before the downstream fails by itself: what Netflix's Failure Injection
// Testing did at Hystrix's commands. A fault stands in for the user's code,
// where the downstream would fail, so that everything else works as for a
// real failure: a delay holds the permit or the pool worker and runs into
// the timeout, and an injected error is a FAILURE that the fallback
// answers and the breaker counts. With MarkedOnly, only the executions of
// requests marked by [WithFaultInjection] meet them, as FIT failed only
// the requests it chose. With Until, the faults stop by themselves at a
// time, as a chaos experiment has a duration. The key's status counts the
// faults injected, and the streams, Prometheus, OpenTelemetry and the
// dashboard show them, so that nobody takes them for the downstream's.
//
// # Tracing
//
// [Registry.SetTracer] traces every execution of a registry's commands
// (package oteltrace makes OpenTelemetry spans of them): each execution,
// each retry and hedge too, is traced from before its breaker is asked
// to its Completion, under its caller's context, and its run and
// fallback get the trace's context, so that what they do is the
// execution's child. A trace that is a [FaultTrace] is told of the faults
// injected into its execution. A registry without a tracer pays one load
// of a pointer per execution.
//
// # Where it differs from Hystrix
//
//   - Threads cannot be interrupted: cancellation reaches run through its
//     context, and a timed-out run holds its worker (or, semaphore
//     isolated, its caller) until it returns.
//   - Queue and Observe never block their caller, in either isolation.
//   - A half-open trial that is rejected by the semaphore, cancelled or
//     panics re-opens the breaker; one that ends in a bad request, or a
//     hedge that another attempt of its call beat, frees the trial for the
//     next caller.
//   - Key functions fail as errors (a [*KeyFuncError]): a pool key function
//     that panics or returns an invalid key fails the execution as run
//     would; a cache key function that panics fails the call before the
//     execution begins, as an exception in Hystrix's getCacheKey.
//   - A response shared through the request cache comes from one execution
//     that goes on while any caller waits, and is recorded once; when every
//     caller has left, it is cancelled and leaves the cache. An
//     ObservableCommand's stream reaches each caller as it comes, the
//     values so far replayed to a caller that comes later, as through
//     Hystrix's cache(). The request log lists executions in the order
//     they ended.
//   - A collapser's window opens with the first request of a batch and
//     closes Delay later; a batch that reaches MaxRequestsInBatch starts at
//     once. When a request context ends, its requests still waiting fail
//     with [ErrRequestContextDone].
//
// How the stages are built and made fast (one implementation of
// Hystrix's toObservable driven two ways, the light run context, the
// worker pool) is in docs/design.md and beside the code.
package command
