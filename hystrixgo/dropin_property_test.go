package hystrix

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/clock"
	metricCollector "github.com/rxhystrix/rxhystrix/hystrixgo/metric_collector"
)

// The forms a command is called in.
type callForm int

const (
	formDo callForm = iota
	formDoC
	formGo
	formGoC
)

var callFormNames = [...]string{"Do", "DoC", "Go", "GoC"}

func (f callForm) String() string { return callFormNames[f] }

// Every command, in every form, however run and the fallback end,
// answers as hystrix-go does (hystrixGoAnswer): the caller gets run's
// error as it is, or ErrTimeout, ErrCircuitOpen, ErrMaxConcurrency or the
// context's error; the fallback is called once with that same error, and
// a failed fallback's error is hystrix-go's message; run is called only
// when the circuit lets it; a panic is recovered wherever it happens; a
// Go channel gets the error or nothing; each collector gets one Update
// that says how run and the fallback ended; and every slot comes back.
func TestDropInAnswersAsHystrixGo(t *testing.T) {
	withCollectors()
	rapid.Check(t, func(rt *rapid.T) {
		e, mc, restore := swapEngine()
		defer restore()
		d := &dropInDriver{
			t: rt, e: e, mc: mc,
			name:    fmt.Sprintf("dropin-%d", dropInChecks.Add(1)), // a collector of its own
			maxConc: rapid.IntRange(1, 3).Draw(rt, "MaxConcurrentRequests"),
			timeout: time.Duration(rapid.IntRange(1, 2000).Draw(rt, "Timeout")) * time.Millisecond,
		}
		// A volume no check reaches: the circuit opens only when forced.
		ConfigureCommand(d.name, CommandConfig{Timeout: int(d.timeout / time.Millisecond),
			MaxConcurrentRequests: d.maxConc, RequestVolumeThreshold: 1 << 30})
		e.circuit(d.name) // its collector, before any call makes it
		for i := range rapid.IntRange(1, 6).Draw(rt, "steps") {
			end := rapid.SampledFrom(runEnds).Draw(rt, fmt.Sprintf("run %d", i))
			forms := []callForm{formDo, formDoC, formGo, formGoC}
			if end.needsContext() {
				forms = []callForm{formDoC, formGoC}
			}
			form := rapid.SampledFrom(forms).Draw(rt, fmt.Sprintf("form %d", i))
			fb := rapid.SampledFrom(fallbackEnds).Draw(rt, fmt.Sprintf("fallback %d", i))
			d.step(form, hystrixGoAnswerOf(end, fb))
		}
	})
}

var dropInChecks atomic.Int64

// dropInDriver makes the property test's commands and checks each.
type dropInDriver struct {
	t       *rapid.T
	e       *engine
	mc      *clock.Manual
	name    string
	maxConc int
	timeout time.Duration
	updates int // collector updates so far
}

// dropInCall is one command of a step: its run and fallback, and what
// they saw.
type dropInCall struct {
	want    hystrixGoAnswer
	started chan struct{} // run waits to be timed out or left
	release chan struct{} // a run timed out returns once closed

	ran     atomic.Bool
	fbCalls atomic.Int32
	fbGot   atomic.Pointer[error]
}

func (c *dropInCall) run(ctx context.Context) error {
	c.ran.Store(true)
	switch c.want.end {
	case runEndFails:
		return errRun
	case runEndPanics:
		panic("run boom")
	case runEndTimesOut:
		c.started <- struct{}{}
		<-c.release // Do's run has no context to wait on
	case runEndCallerLeavesMidRun:
		c.started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (c *dropInCall) fallback(_ context.Context, err error) error {
	c.fbCalls.Add(1)
	c.fbGot.Store(&err)
	switch c.want.fb {
	case fallbackEndFails:
		return errFbFailed
	case fallbackEndPanics:
		panic("fallback boom")
	}
	return nil
}

// start calls the command in form under ctx, and returns the channel
// of Do's answer, or Go's channel.
func (d *dropInDriver) start(ctx context.Context, form callForm, c *dropInCall) (answer, sent <-chan error) {
	run := func() error { return c.run(context.Background()) }
	var fb func(error) error
	var fbC func(context.Context, error) error
	if c.want.fb != noFallbackFunc {
		fb = func(err error) error { return c.fallback(context.Background(), err) }
		fbC = c.fallback
	}
	switch form {
	case formGo:
		return nil, Go(d.name, run, fb)
	case formGoC:
		return nil, GoC(ctx, d.name, c.run, fbC)
	}
	ch := make(chan error, 1)
	go func() {
		if form == formDo {
			ch <- Do(d.name, run, fb)
		} else {
			ch <- DoC(ctx, d.name, c.run, fbC)
		}
	}()
	return ch, nil
}

// step calls one command and checks it against the model.
func (d *dropInDriver) step(form callForm, want hystrixGoAnswer) {
	t := d.t
	t.Helper()
	c := &dropInCall{want: want, started: make(chan struct{}, 1), release: make(chan struct{})}
	letHoldersGo := func() {}
	var sent <-chan error
	// Everything the step started ends: then every slot is back, and a
	// Go told of no error has sent nothing.
	defer func() {
		close(c.release)
		letHoldersGo()
		d.awaitSlotsBack()
		if sent != nil && !want.sendsError && len(sent) != 0 {
			t.Fatalf("Go sent %v after a call that succeeded", <-sent)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	switch want.end {
	case runEndCallerLeftBefore:
		cancel()
	case runEndShortCircuited:
		d.forceOpen(true)
		defer d.forceOpen(false)
	case runEndRejected:
		letHoldersGo = d.holdEverySlot()
	}

	var answer <-chan error
	answer, sent = d.start(ctx, form, c)
	switch want.end {
	case runEndTimesOut:
		await(t, c.started)
		d.mc.Advance(d.timeout)
	case runEndCallerLeavesMidRun:
		await(t, c.started)
		cancel()
	}
	var err error
	switch {
	case answer != nil:
		err = await(t, answer)
	case want.sendsError:
		err = await(t, sent)
	}
	// The call has ended once its collectors are told, a Go that sends
	// nothing included.
	got := d.awaitUpdates(1)

	if c.ran.Load() != want.runs {
		t.Fatalf("run called: %v; want %v", c.ran.Load(), want.runs)
	}
	if wrong := want.checkError(err); wrong != nil {
		t.Fatalf("%v", wrong)
	}
	if n := c.fbCalls.Load(); n != want.fallbackCalls {
		t.Fatalf("the fallback was called %d times; want %d", n, want.fallbackCalls)
	}
	if p := c.fbGot.Load(); p != nil && !want.isBase(*p) {
		t.Fatalf("the fallback got %#v; want %q as it is", *p, want.baseText)
	}
	wantUpdate := want.update
	if want.end == runEndRejected {
		wantUpdate.ConcurrencyInUse = 1 // every slot held
	} else {
		got.ConcurrencyInUse = 0
	}
	got.RunDuration, got.TotalDuration = 0, 0
	if got != wantUpdate {
		t.Fatalf("the collector got %+v; want %+v", got, wantUpdate)
	}
}

// holdEverySlot starts MaxConcurrentRequests commands whose runs wait,
// and returns the function that lets them succeed and waits for their
// updates.
func (d *dropInDriver) holdEverySlot() (letGo func()) {
	h := newHang()
	var chs []chan error
	for range d.maxConc {
		chs = append(chs, GoC(context.Background(), d.name, h.run, nil))
	}
	h.wait(d.t, d.maxConc)
	return func() {
		close(h.release)
		d.awaitUpdates(d.maxConc)
		for _, ch := range chs {
			if len(ch) != 0 {
				d.t.Fatalf("a holder that succeeded sent %v", <-ch)
			}
		}
	}
}

// awaitUpdates waits for n more collector updates, and returns the
// first of them.
func (d *dropInDriver) awaitUpdates(n int) metricCollector.MetricResult {
	d.t.Helper()
	first := d.updates
	d.updates += n
	collector := collectorOf(d.t, d.name)
	var rs []metricCollector.MetricResult
	waitUntil(d.t, fmt.Sprintf("%d collector updates", d.updates), func() bool {
		rs = collector.results()
		return len(rs) >= d.updates
	})
	if len(rs) != d.updates {
		d.t.Fatalf("the collector got %d updates; want %d: %+v", len(rs), d.updates, rs)
	}
	return rs[first]
}

// awaitSlotsBack waits until no run holds a slot of the name's pool.
func (d *dropInDriver) awaitSlotsBack() {
	waitUntil(d.t, "every run to give its slot back", func() bool {
		pm, ok := d.e.reg.Metrics().LookupPool(keyOf(d.name))
		return !ok || pm.ActiveCount() == 0 // none: nothing has run on the pool yet
	})
}

// forceOpen forces the name's circuit open, or lets it go.
func (d *dropInDriver) forceOpen(open bool) {
	key := keyOf(d.name)
	cfg, _ := commandConfig(key, d.e.settingsFor(d.name))
	cfg.Breaker.ForceOpen = open
	if err := d.e.reg.Configure(key, cfg); err != nil {
		d.t.Fatalf("Configure: %v", err)
	}
}

// waitUntil spins until cond holds, failing after 10s of real time: for
// goroutines to reach a state that nothing announces.
func waitUntil(t fatalT, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Microsecond)
	}
}
