package breaker

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// CircuitBreaker is what a command consults before each execution and
// tells afterwards: Hystrix's HystrixCircuitBreaker.
type CircuitBreaker interface {
	// AllowRequest reports whether a request would be let through now,
	// without claiming a half-open trial. It is idempotent.
	AllowRequest() bool
	// AttemptExecution reports whether a request may execute now. When it
	// lets a request through an open breaker (a half-open trial), that
	// trial is claimed: the caller must report its outcome.
	AttemptExecution() bool
	// IsOpen reports whether the breaker is open or half-open (or forced
	// open), as the dashboard shows it.
	IsOpen() bool
	// MarkSuccess reports that an execution AttemptExecution admitted
	// succeeded.
	MarkSuccess()
	// MarkNonSuccess reports that an execution AttemptExecution admitted
	// did not succeed: it failed, timed out, was rejected, was cancelled
	// or panicked.
	MarkNonSuccess()
}

// HealthSource is the health-count stream a Breaker trips on, usually a
// *metricsstream.CommandMetrics.
type HealthSource interface {
	// HealthStream returns the stream of health snapshots of the rolling
	// window. The breaker subscribes when it is made and again after
	// each close; it ignores the stream's errors and completion.
	HealthStream() observable.Observable[metricsstream.HealthCounts]
	// ResetStream starts the health counts over from zero. The breaker
	// calls it when it closes, before subscribing again.
	ResetStream()
}

// Breaker is the Hystrix 1.5.13 circuit breaker: a state machine that a
// health-count stream trips, that admits trials after a sleep window and
// that the trials' results close or re-open. See the package doc for the
// full semantics and the reporting contract.
//
// A Breaker is safe for concurrent use. It starts no goroutines of its
// own; each subscription to Transitions owns one until it ends. Close
// releases the health subscription.
type Breaker struct {
	// word packs the state, the mode of the config and the half-open
	// trial counts (see state.go); it is all the hot path reads.
	word atomic.Uint64
	// openedAt is the clock reading (nanoseconds since epoch) of the
	// latest opening; it is stored before the word says Open.
	openedAt atomic.Int64
	// sleepWindow is the sleep window of the latest opening, in
	// nanoseconds; it is stored before the word says Open, and is
	// Config.SleepWindow while the breaker is Closed.
	sleepWindow atomic.Int64
	// lastAdmit is the clock reading of the latest trial admission.
	lastAdmit atomic.Int64
	// failureRun counts the executions in a row reported MarkNonSuccess
	// while Closed, when Config.ConsecutiveFailures is set.
	failureRun atomic.Int64
	// throttle holds the float64 bits of the rejection probability of a
	// throttling breaker; it is read only while the word's throttlingBit
	// is set.
	throttle atomic.Uint64
	cfg      atomic.Pointer[Config] // with defaults applied

	name   string
	clock  clock.Clock
	epoch  time.Time
	health HealthSource
	buffer int
	hub    transitionHub

	ctx    context.Context // ends every health subscription on Close
	cancel context.CancelFunc

	mu         sync.Mutex // serializes every change of word
	healthGen  uint64     // the current health subscription; older ones are ignored
	healthSub  observable.Subscription
	lastHealth metricsstream.HealthCounts
	reopens    int            // re-openings from HalfOpen since the breaker last closed
	tripRun    int            // the run of failures that tripped the latest opening, if one did
	jitter     float64        // the share of SleepWindowJitter drawn at the latest opening
	rand       func() float64 // draws jitter and throttled rejections
	closed     bool
}

var _ CircuitBreaker = (*Breaker)(nil)

// New returns a Closed breaker configured by cfg that subscribes to
// health's stream at once. It panics with cfg.Validate's error if cfg is
// invalid, and if health is nil. Call Close when done with it.
func New(cfg Config, health HealthSource, opts ...Option) *Breaker {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	if health == nil {
		panic("breaker: New with nil health")
	}
	o := defaultOptions()
	for _, opt := range opts {
		if opt == nil {
			panic("breaker: New with nil Option")
		}
		opt.apply(&o)
	}
	resolved := cfg.withDefaults()
	b := &Breaker{
		name:      o.name,
		clock:     o.clock,
		epoch:     o.clock.Now(),
		health:    health,
		buffer:    o.buffer,
		rand:      o.rand,
		healthGen: 1,
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.cfg.Store(&resolved)
	b.storeSleepWindowLocked(&resolved) // no opening yet: SleepWindow
	b.word.Store(resolved.mode())
	b.subscribe(1)
	return b
}

// Name returns the name given with WithName.
func (b *Breaker) Name() string { return b.name }

// Config returns the breaker's current configuration, with its zero
// fields replaced by the defaults they stand for.
func (b *Breaker) Config() Config { return *b.cfg.Load() }

// SetConfig changes the configuration of a live breaker. New thresholds
// apply from the next health snapshot, the throttling fields at once, to
// the latest snapshot; a new sleep window (SleepWindow,
// MaxSleepWindow, SleepWindowMultiplier, SleepWindowJitter) to the
// current one, grown by the re-openings since the breaker last closed,
// with the share of the jitter drawn when it opened; force flags and
// HalfOpenTrials at once (a HalfOpen breaker whose successful trials
// already reach the new HalfOpenTrials closes). Disabling a breaker that
// is not Closed closes it (resetting the health stream). Turning
// ConsecutiveFailures on, or enabling the breaker, starts a new run of
// failures. It panics with cfg.Validate's error if cfg is invalid.
func (b *Breaker) SetConfig(cfg Config) {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	resolved := cfg.withDefaults()
	b.mu.Lock()
	now := b.now()
	// A trial that overran the bound in force has re-opened the breaker,
	// as of that bound, whether or not anybody has looked since: settle
	// it under the old Config before the new one can lengthen the bound.
	b.expireLocked(now)
	b.cfg.Store(&resolved)
	b.storeSleepWindowLocked(&resolved)
	b.expireLocked(now) // and a bound the new Config shortens
	old := b.word.Load()
	w := old&^modeMask | resolved.mode()
	if old&countsRunBit == 0 && w&countsRunBit != 0 {
		// Runs were not counted, nor ended by successes, while the
		// setting was off or the breaker disabled: start a new one.
		b.failureRun.Store(0)
	}
	b.word.Store(w)
	b.throttleLocked(&resolved, b.lastHealth)
	w = b.word.Load()
	var resubscribe func()
	switch {
	case resolved.Disabled && stateOf(w) != Closed:
		resubscribe = b.closeLocked(w, now)
	case stateOf(w) == HalfOpen && successOf(w) >= resolved.HalfOpenTrials:
		// Fewer trials are now asked for than have already succeeded:
		// no report is left to close the breaker, so close it now, as
		// MarkSuccess would have.
		resubscribe = b.closeLocked(w, now)
	}
	b.mu.Unlock()
	if resubscribe != nil {
		resubscribe()
	}
}

// AttemptExecution reports whether a request may execute now (Hystrix's
// attemptExecution). A closed breaker answers with one atomic load; one
// that throttles (Config.ThrottleSuccessPercentage) draws, and refuses
// with its ThrottleProbability. An open breaker says no until its sleep
// window has passed; then exactly one caller (HalfOpenTrials callers)
// wins a trial and moves it to HalfOpen. The winner must report the
// trial's outcome with MarkSuccess, MarkNonSuccess or MarkIgnored.
func (b *Breaker) AttemptExecution() bool {
	if b.word.Load()&slowPathMask == 0 {
		return true
	}
	admitted, _ := b.attemptSlow()
	return admitted
}

// AttemptTrial is AttemptExecution, and also reports whether the request
// it lets through holds a half-open trial: one it let through an Open or
// HalfOpen breaker, not forced closed or disabled. Only such a request
// may give its trial back with MarkIgnored; a request let through a
// Closed breaker that ends while the breaker is HalfOpen holds no trial
// to give back.
func (b *Breaker) AttemptTrial() (admitted, trial bool) {
	if b.word.Load()&slowPathMask == 0 {
		return true, false
	}
	return b.attemptSlow()
}

func (b *Breaker) attemptSlow() (admitted, trial bool) {
	w := b.word.Load()
	switch {
	case w&forcedOpenBit != 0:
		return false, false
	case w&allowAllBit != 0:
		return true, false
	}
	if stateOf(w) == Closed {
		return w&throttlingBit == 0 || !b.throttled(), false
	}
	now := b.now()
	cfg := b.cfg.Load()
	switch stateOf(w) {
	case Open:
		if !b.sleepWindowOver(now) {
			return false, false
		}
	case HalfOpen:
		if admittedOf(w) >= cfg.HalfOpenTrials && !b.trialOverdue(w, cfg, now) {
			return false, false
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.admitLocked(b.now())
}

// admitLocked decides, under the lock, whether a request that found the
// breaker not Closed may go through, claiming a trial if so.
func (b *Breaker) admitLocked(now int64) (admitted, trial bool) {
	b.expireLocked(now)
	w := b.word.Load()
	switch {
	case w&forcedOpenBit != 0:
		return false, false
	case w&allowAllBit != 0:
		return true, false
	}
	cfg := b.cfg.Load()
	switch stateOf(w) {
	case Open:
		if !b.sleepWindowOver(now) {
			return false, false
		}
		b.lastAdmit.Store(now)
		b.setLocked(w, HalfOpen, 1, 0, now)
	case HalfOpen:
		n := admittedOf(w)
		if n >= cfg.HalfOpenTrials {
			return false, false
		}
		b.lastAdmit.Store(now)
		b.word.Store(makeWord(w, HalfOpen, n+1, successOf(w)))
	default:
		// Closed meanwhile (a trial closed it, SetConfig or Reset did):
		// admitted as a Closed breaker admits, holding no trial.
		return true, false
	}
	return true, true
}

// AllowRequest reports whether AttemptExecution would let a request
// through now, without claiming a trial (Hystrix's allowRequest): true
// when Closed (throttling or not: AttemptExecution draws), when Open with
// the sleep window over, and when HalfOpen with a trial still to admit.
func (b *Breaker) AllowRequest() bool {
	if b.word.Load()&slowPathMask == 0 {
		return true
	}
	return b.allowSlow()
}

func (b *Breaker) allowSlow() bool {
	w := b.refresh()
	switch {
	case w&forcedOpenBit != 0:
		return false
	case w&allowAllBit != 0:
		return true
	}
	cfg := b.cfg.Load()
	switch stateOf(w) {
	case Open:
		return b.sleepWindowOver(b.now())
	case HalfOpen:
		return admittedOf(w) < cfg.HalfOpenTrials
	}
	return true
}

// IsOpen reports whether the breaker is Open or HalfOpen, true when forced
// open and false when forced closed or disabled (Hystrix's isOpen).
func (b *Breaker) IsOpen() bool {
	w := b.word.Load()
	switch {
	case w&forcedOpenBit != 0:
		return true
	case w&allowAllBit != 0:
		return false
	}
	return stateOf(w) != Closed
}

// State returns the state of the breaker's state machine. The force flags
// do not change it (IsOpen and AttemptExecution honour them); a disabled
// breaker is Closed.
func (b *Breaker) State() State { return stateOf(b.refresh()) }

// MarkSuccess reports that an admitted execution succeeded (Hystrix's
// markSuccess). In HalfOpen it counts a successful trial; once
// HalfOpenTrials trials have succeeded the breaker closes, resets the
// health stream and subscribes to it again. With
// Config.ConsecutiveFailures set it ends the run of failures. Otherwise
// it does nothing: the health stream does the counting.
func (b *Breaker) MarkSuccess() {
	w := b.word.Load()
	if w&countsRunBit != 0 {
		b.endRun()
	}
	if stateOf(w) == HalfOpen {
		b.markSuccessSlow()
	}
}

func (b *Breaker) markSuccessSlow() {
	b.mu.Lock()
	now := b.now()
	b.expireLocked(now)
	w := b.word.Load()
	if stateOf(w) != HalfOpen {
		b.mu.Unlock()
		return
	}
	if n := successOf(w) + 1; n < b.cfg.Load().HalfOpenTrials {
		b.word.Store(makeWord(w, HalfOpen, admittedOf(w), n))
		b.mu.Unlock()
		return
	}
	resubscribe := b.closeLocked(w, now)
	b.mu.Unlock()
	if resubscribe != nil {
		resubscribe()
	}
}

// MarkNonSuccess reports that an admitted execution did not succeed
// (Hystrix's markNonSuccess): it failed, timed out, was rejected by a pool
// or semaphore, was cancelled, or panicked. In HalfOpen it re-opens the
// breaker and starts a new sleep window. In Closed, with
// Config.ConsecutiveFailures set, it counts toward the run of failures
// that trips the breaker; otherwise it does nothing.
func (b *Breaker) MarkNonSuccess() {
	w := b.word.Load()
	switch {
	case stateOf(w) == HalfOpen:
		b.markNonSuccessSlow()
	case w&countsRunBit != 0 && stateOf(w) == Closed:
		b.countFailure()
	}
}

// MarkCancelled reports that an admitted execution ended because its
// caller left before it did. In HalfOpen it is a failed trial, as
// MarkNonSuccess, which Hystrix 1.5.13 reports for an unsubscribed trial;
// in Closed it neither counts toward nor ends a run of
// Config.ConsecutiveFailures, as a cancellation does not count in health:
// the caller's leaving says nothing of the dependency.
func (b *Breaker) MarkCancelled() {
	if stateOf(b.word.Load()) == HalfOpen {
		b.markNonSuccessSlow()
	}
}

func (b *Breaker) markNonSuccessSlow() {
	b.mu.Lock()
	now := b.now()
	b.expireLocked(now)
	if w := b.word.Load(); stateOf(w) == HalfOpen {
		b.openLocked(w, now, 0)
	}
	b.mu.Unlock()
}

// MarkIgnored reports that an admitted execution ended in an outcome that
// is neither success nor failure, a bad request. In HalfOpen it gives the
// trial back, so that the next caller of AttemptExecution may try; in
// other states it does nothing. Report it only for an execution that
// holds a trial (see AttemptTrial): one let through while the breaker was
// Closed would give back a trial it never held, and let a second run
// beside the one still out. Beyond Hystrix, which counts a bad request
// during the trial as a failure.
func (b *Breaker) MarkIgnored() {
	if stateOf(b.word.Load()) == HalfOpen {
		b.markIgnoredSlow()
	}
}

func (b *Breaker) markIgnoredSlow() {
	b.mu.Lock()
	now := b.now()
	b.expireLocked(now)
	if w := b.word.Load(); stateOf(w) == HalfOpen && admittedOf(w) > 0 {
		b.word.Store(makeWord(w, HalfOpen, admittedOf(w)-1, successOf(w)))
	}
	b.mu.Unlock()
}

// Transitions returns the breaker's state changes as a hot Observable:
// a subscriber receives the transitions that happen after it subscribed,
// in order, on a goroutine of its own that ends when the subscription
// does. The breaker never waits for a subscriber: one that falls
// WithTransitionBuffer transitions behind loses the newer ones (see
// DroppedTransitions). One that panics is unsubscribed (see
// PanickedSubscribers). The stream completes when the breaker is closed.
func (b *Breaker) Transitions() observable.Observable[Transition] {
	return b.hub.observable(b.buffer)
}

// DroppedTransitions returns how many transitions were not delivered
// because a subscriber's buffer was full, summed over subscribers.
func (b *Breaker) DroppedTransitions() uint64 { return b.hub.dropped.Load() }

// PanickedSubscribers returns how many subscribers of Transitions
// panicked. Each was unsubscribed, receiving nothing more, and its
// subscription failed with a *metricsstream.SubscriberPanicError; the
// other subscribers and the breaker went on.
func (b *Breaker) PanickedSubscribers() uint64 { return b.hub.panicked.Load() }

// Close unsubscribes the breaker from its health stream and completes the
// Transitions subscribers. Afterwards the breaker no longer trips on
// health (a run of Config.ConsecutiveFailures still trips it, with no
// transition told), and its other methods keep working. Close is
// idempotent.
func (b *Breaker) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	b.healthGen++
	sub := b.healthSub
	b.healthSub = nil
	b.mu.Unlock()
	b.cancel()
	if sub != nil {
		sub.Unsubscribe()
	}
	b.hub.close()
}

// String returns the breaker's name and state, e.g. "GetUser: OPEN".
func (b *Breaker) String() string {
	if b.name == "" {
		return fmt.Sprintf("breaker: %v", b.State())
	}
	return fmt.Sprintf("%s: %v", b.name, b.State())
}

// now returns the breaker's clock reading in nanoseconds since epoch.
func (b *Breaker) now() int64 { return int64(b.clock.Since(b.epoch)) }

// SleepWindow returns how long the breaker refuses every request once it
// opens: while it is Open or HalfOpen, the sleep window its latest
// opening started, longer than Config.SleepWindow after failed trials
// when Config.MaxSleepWindow is set, with its Config.SleepWindowJitter;
// while it is Closed, Config.SleepWindow, the window the next trip will
// start before its jitter. A HalfOpen breaker whose trial is overdue
// re-opens first, as State does, and tells its new window.
func (b *Breaker) SleepWindow() time.Duration {
	b.refresh()
	return time.Duration(b.sleepWindow.Load())
}

// sleepWindowOver reports whether more than the sleep window has passed
// since the breaker opened (Hystrix's isAfterSleepWindow). It compares the
// time elapsed, which cannot overflow, so that a sleep window as long as
// time.Duration allows never ends early.
func (b *Breaker) sleepWindowOver(now int64) bool {
	return now-b.openedAt.Load() > b.sleepWindow.Load()
}

// trialOverdue reports whether a HalfOpen word has an unreported trial and
// the latest admission is more than HalfOpenTrialTimeout ago, so that
// every unreported trial has been out for longer than that.
func (b *Breaker) trialOverdue(w uint64, cfg *Config, now int64) bool {
	return cfg.HalfOpenTrialTimeout > 0 && admittedOf(w) > successOf(w) &&
		now-b.lastAdmit.Load() > int64(cfg.HalfOpenTrialTimeout)
}

// refresh returns the current word after re-opening a HalfOpen breaker
// whose trial is overdue.
func (b *Breaker) refresh() uint64 {
	w := b.word.Load()
	if stateOf(w) != HalfOpen {
		return w
	}
	if !b.trialOverdue(w, b.cfg.Load(), b.now()) {
		return w
	}
	b.mu.Lock()
	b.expireLocked(b.now())
	w = b.word.Load()
	b.mu.Unlock()
	return w
}

// expireLocked re-opens a HalfOpen breaker whose trial is overdue, as of
// the moment the trial's bound ran out.
func (b *Breaker) expireLocked(now int64) {
	w := b.word.Load()
	if stateOf(w) != HalfOpen {
		return
	}
	cfg := b.cfg.Load()
	if b.trialOverdue(w, cfg, now) {
		b.openLocked(w, b.lastAdmit.Load()+int64(cfg.HalfOpenTrialTimeout), 0)
	}
}

// setLocked moves the breaker to state to with the given trial counts and
// publishes the transition if the state changed.
func (b *Breaker) setLocked(w uint64, to State, admitted, successes int, at int64) {
	b.word.Store(makeWord(w, to, admitted, successes))
	if from := stateOf(w); from != to {
		t := Transition{
			Name:   b.name,
			From:   from,
			To:     to,
			Time:   b.epoch.Add(time.Duration(at)),
			Health: b.lastHealth,
		}
		if to == Open {
			t.SleepWindow = time.Duration(b.sleepWindow.Load()) // under the lock: not SleepWindow, which may take it
			t.ConsecutiveFailures = b.tripRun
		}
		b.hub.publish(t)
	}
}

// openLocked opens the breaker as of at, starting a sleep window: the
// configured one when it trips, and a longer one for each trial that
// failed since it last closed, when the Config says so. run is the run
// of failures that tripped it (Config.ConsecutiveFailures), 0 when
// something else opened it.
func (b *Breaker) openLocked(w uint64, at int64, run int) {
	b.tripRun = run
	if stateOf(w) == HalfOpen {
		b.reopens++
	} else {
		b.reopens = 0
	}
	cfg := b.cfg.Load()
	b.jitter = 0
	if cfg.SleepWindowJitter > 0 {
		b.jitter = b.rand()
	}
	b.openedAt.Store(at)
	b.storeSleepWindowLocked(cfg)
	b.setLocked(w, Open, 0, 0, at)
}

// storeSleepWindowLocked sets the sleep window to the one of the latest
// opening by cfg: grown by the re-openings since the breaker last
// closed, with the jitter drawn when it opened. With neither, as while
// the breaker is Closed, it is cfg.SleepWindow.
func (b *Breaker) storeSleepWindowLocked(cfg *Config) {
	b.sleepWindow.Store(int64(cfg.sleepWindowOf(b.reopens, b.jitter)))
}

// closeLocked closes the breaker and retires its health subscription. It
// returns the function, to be called without the lock, that resets the
// health stream and subscribes to it again; nil once the breaker is
// closed for good.
func (b *Breaker) closeLocked(w uint64, at int64) func() {
	b.reopens, b.jitter = 0, 0
	b.failureRun.Store(0)
	b.storeSleepWindowLocked(b.cfg.Load())
	b.setLocked(w, Closed, 0, 0, at)
	b.lastHealth = metricsstream.HealthCounts{}
	b.healthGen++
	if b.closed {
		return nil
	}
	old, gen := b.healthSub, b.healthGen
	b.healthSub = nil
	return func() {
		b.health.ResetStream()
		if old != nil {
			old.Unsubscribe()
		}
		b.subscribe(gen)
	}
}

// subscribe subscribes to the health stream as subscription gen, unless
// a newer one has replaced it meanwhile or the breaker is closed.
func (b *Breaker) subscribe(gen uint64) {
	sub := b.health.HealthStream().Subscribe(b.ctx, healthObserver{b: b, gen: gen})
	b.mu.Lock()
	if b.closed || gen != b.healthGen {
		b.mu.Unlock()
		sub.Unsubscribe()
		return
	}
	b.healthSub = sub
	b.mu.Unlock()
}

// onHealth handles a health snapshot of subscription gen: a Closed breaker
// trips when the snapshot is over the thresholds (Hystrix's
// subscribeToStream); snapshots never close or reset a breaker that is
// Open or HalfOpen.
func (b *Breaker) onHealth(gen uint64, hc metricsstream.HealthCounts) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if gen != b.healthGen {
		return
	}
	now := b.now()
	b.lastHealth = hc
	b.expireLocked(now)
	w := b.word.Load()
	cfg := b.cfg.Load()
	if stateOf(w) == Closed && w&disabledBit == 0 && trips(cfg, hc) {
		b.openLocked(w, now, 0)
	}
	b.throttleLocked(cfg, hc)
}

// Trips reports whether a Closed breaker configured by c would open on
// the health snapshot hc: enough volume, and enough errors or, with
// slow-call tripping on, enough slow calls. Zero fields of c take their
// defaults; force flags and Disabled are not considered. A health source
// that has more than one view of health to offer (see package fleet) uses
// it to pick the one that trips.
func (c Config) Trips(hc metricsstream.HealthCounts) bool {
	resolved := c.withDefaults()
	return trips(&resolved, hc)
}

// trips reports whether hc is over cfg's thresholds: enough volume, and
// enough errors or, with slow-call tripping on, enough slow calls.
func trips(cfg *Config, hc metricsstream.HealthCounts) bool {
	if hc.Total < int64(cfg.RequestVolumeThreshold) {
		return false
	}
	if hc.ErrorPercentage >= cfg.ErrorThresholdPercentage {
		return true
	}
	return cfg.SlowCallDuration > 0 && hc.SlowPercentage() >= cfg.SlowCallRatePercentage
}

// healthObserver feeds one health subscription to its breaker.
type healthObserver struct {
	b   *Breaker
	gen uint64
}

func (o healthObserver) OnNext(hc metricsstream.HealthCounts) { o.b.onHealth(o.gen, hc) }
func (o healthObserver) OnError(error)                        {}
func (o healthObserver) OnCompleted()                         {}
