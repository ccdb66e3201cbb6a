package hystrix

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

var errRun = errors.New("run failed")

func TestDoErrors(t *testing.T) {
	errFb := errors.New("fallback failed")
	cases := []struct {
		name       string
		run        func() error
		fallback   func(error) error // nil: none
		want       error
		wantString string // when want is nil and the error is hystrix-go's message
		fbGets     error
	}{
		{name: "success", run: func() error { return nil }},
		{name: "run error, no fallback", run: func() error { return errRun }, want: errRun},
		{name: "run error, fallback succeeds", run: func() error { return errRun },
			fallback: func(error) error { return nil }, fbGets: errRun},
		{name: "run error, fallback fails", run: func() error { return errRun },
			fallback: func(error) error { return errFb }, fbGets: errRun,
			wantString: "fallback failed with 'fallback failed'. run error was 'run failed'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			testEngine(t)
			var got error
			calls := 0
			var fb func(error) error
			if c.fallback != nil {
				fb = func(err error) error {
					calls++
					got = err
					return c.fallback(err)
				}
			}
			err := Do("cmd", c.run, fb)
			switch {
			case c.wantString != "":
				if err == nil || err.Error() != c.wantString {
					t.Fatalf("Do = %v; want %q", err, c.wantString)
				}
			case err != c.want:
				t.Fatalf("Do = %v; want %v", err, c.want)
			}
			if c.fbGets != nil && (calls != 1 || got != c.fbGets) {
				t.Fatalf("fallback called %d times with %v; want once with %v", calls, got, c.fbGets)
			}

			// Go and GoC agree with Do.
			ch := Go("cmd", c.run, c.fallback)
			var fbC func(context.Context, error) error
			if c.fallback != nil {
				fbC = func(_ context.Context, err error) error { return c.fallback(err) }
			}
			chC := GoC(context.Background(), "cmd", func(context.Context) error { return c.run() }, fbC)
			if cap(ch) < 1 || cap(chC) < 1 {
				t.Fatalf("cap(Go) = %d, cap(GoC) = %d; want at least 1", cap(ch), cap(chC))
			}
			if err == nil {
				waitIdle(t, "cmd")
				if len(ch) != 0 || len(chC) != 0 {
					t.Fatalf("after a success the channels hold %d and %d errors; want none", len(ch), len(chC))
				}
				return
			}
			if e := await(t, ch); e.Error() != err.Error() {
				t.Fatalf("Go sent %v; want %v", e, err)
			}
			if e := await(t, chC); e.Error() != err.Error() {
				t.Fatalf("GoC sent %v; want %v", e, err)
			}
		})
	}
}

// waitIdle waits until no command of name is running.
func waitIdle(t *testing.T, name string) {
	t.Helper()
	cb, _, _ := GetCircuit(name)
	deadline := time.Now().Add(10 * time.Second)
	for cb.core.metrics.ConcurrentExecutions() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("commands still running")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestEmptyNameIsValid(t *testing.T) {
	testEngine(t)
	if err := Do("", func() error { return nil }, nil); err != nil {
		t.Fatalf(`Do("") = %v; want nil`, err)
	}
	if _, ok := GetCircuitSettings()[""]; !ok {
		t.Fatal(`GetCircuitSettings has no entry for ""`)
	}
}

func TestTimeoutReturnsErrTimeout(t *testing.T) {
	e, mc := testEngine(t)
	withCollectors()
	ConfigureCommand("slow", CommandConfig{Timeout: 100})
	h := newHang()
	var fbCalls atomic.Int32
	cancelled := make(chan struct{})
	ch := GoC(context.Background(), "slow", func(ctx context.Context) error {
		h.started <- struct{}{}
		<-ctx.Done()
		close(cancelled)
		<-h.release // ignores its context: still holds its slot
		return errRun
	}, func(_ context.Context, err error) error {
		fbCalls.Add(1)
		return err
	})
	h.wait(t, 1)
	mc.Advance(100 * time.Millisecond)
	err := await(t, ch)
	if err == nil || err.Error() != "fallback failed with 'hystrix: timeout'. run error was 'hystrix: timeout'" {
		t.Fatalf("GoC = %v; want the fallback's failure on ErrTimeout", err)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("run's context was not cancelled at the timeout")
	}

	// Without a fallback the caller gets ErrTimeout itself, == and DeepEqual.
	ch = GoC(context.Background(), "slow", h.run, nil)
	h.wait(t, 1)
	mc.Advance(100 * time.Millisecond)
	if err := await(t, ch); err != ErrTimeout || !reflect.DeepEqual(err, ErrTimeout) || err.Error() != "hystrix: timeout" {
		t.Fatalf("DoC = %#v; want ErrTimeout", err)
	}
	close(h.release)
	waitIdle(t, "slow")
	if n := fbCalls.Load(); n != 1 {
		t.Fatalf("fallback called %d times; want 1: a late result gets no second fallback", n)
	}
	m := e.coreFor("slow").metrics
	mc.Advance(10 * time.Second)
	if got := m.CumulativeCount(metricsstream.Timeout); got != 2 {
		t.Errorf("TIMEOUT count = %d; want 2", got)
	}
	if got := m.CumulativeCount(metricsstream.Success) + m.CumulativeCount(metricsstream.Failure); got != 0 {
		t.Errorf("late results counted %d times; want 0", got)
	}
	rs := collectorOf(t, "slow").results()
	if len(rs) != 2 || rs[0].Timeouts != 1 || rs[0].Errors != 1 || rs[0].FallbackFailures != 1 || rs[1].Timeouts != 1 {
		t.Fatalf("collector got %+v; want two timeouts, the first with a failed fallback", rs)
	}
}

func TestContextDoneFirst(t *testing.T) {
	cases := []struct {
		name string
		end  func(cancel context.CancelFunc, advance func())
		mk   func() (context.Context, context.CancelFunc)
		want error
	}{
		{"canceled", func(cancel context.CancelFunc, _ func()) { cancel() },
			func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			context.Canceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, _ := testEngine(t)
			withCollectors()
			h := newHang()
			defer close(h.release)
			ctx, cancel := c.mk()
			defer cancel()
			var fbGot error
			ch := doAsync(ctx, "ctx", h.run, func(_ context.Context, err error) error { fbGot = err; return nil })
			h.wait(t, 1)
			c.end(cancel, nil)
			if err := await(t, ch); err != nil {
				t.Fatalf("GoC with a fallback that succeeds = %v; want nil", err)
			}
			if fbGot != c.want {
				t.Fatalf("fallback got %v; want %v", fbGot, c.want)
			}
			ctx2, cancel2 := c.mk()
			defer cancel2()
			ch = GoC(ctx2, "ctx", h.run, nil)
			h.wait(t, 1)
			c.end(cancel2, nil)
			if err := await(t, ch); err != c.want {
				t.Fatalf("GoC = %v; want %v as it is", err, c.want)
			}
			rs := collectorOf(t, "ctx").results()
			if len(rs) != 2 {
				t.Fatalf("collector got %d updates; want 2", len(rs))
			}
			r := rs[0]
			if r.Attempts != 1 || r.ContextCanceled != 1 || r.Errors != 0 || r.Failures != 0 || r.Timeouts != 0 || r.FallbackSuccesses != 1 {
				t.Fatalf("collector got %+v; want Attempts 1, ContextCanceled 1, FallbackSuccesses 1, no errors", r)
			}
			_ = e
		})
	}
}

func TestContextDeadlineFirst(t *testing.T) {
	testEngine(t)
	withCollectors()
	h := newHang()
	defer close(h.release)
	ctx, cancel := context.WithCancelCause(context.Background())
	dctx, dcancel := context.WithDeadline(ctx, time.Now().Add(time.Millisecond)) // real time: the caller's own deadline
	defer dcancel()
	defer cancel(nil)
	err := DoC(dctx, "deadline", h.run, nil)
	if err != context.DeadlineExceeded {
		t.Fatalf("DoC = %v; want context.DeadlineExceeded", err)
	}
	r := collectorOf(t, "deadline").results()
	if len(r) != 1 || r[0].ContextDeadlineExceeded != 1 || r[0].Errors != 0 {
		t.Fatalf("collector got %+v; want ContextDeadlineExceeded 1", r)
	}
}

func TestMaxConcurrency(t *testing.T) {
	testEngine(t)
	withCollectors()
	ConfigureCommand("pool", CommandConfig{MaxConcurrentRequests: 2})
	h := newHang()
	chs := []chan error{GoC(context.Background(), "pool", h.run, nil), GoC(context.Background(), "pool", h.run, nil)}
	h.wait(t, 2)
	var ran atomic.Bool
	var fbGot error
	start := time.Now()
	err := Do("pool", func() error { ran.Store(true); return nil }, func(err error) error { fbGot = err; return err })
	if took := time.Since(start); took > time.Second {
		t.Errorf("rejection took %v; want it at once", took)
	}
	if ran.Load() {
		t.Error("run was called beyond MaxConcurrentRequests")
	}
	if fbGot != ErrMaxConcurrency {
		t.Errorf("fallback got %v; want ErrMaxConcurrency", fbGot)
	}
	if want := "fallback failed with 'hystrix: max concurrency'. run error was 'hystrix: max concurrency'"; err == nil || err.Error() != want {
		t.Errorf("Do = %v; want %q", err, want)
	}
	if err := Do("pool", func() error { return nil }, nil); err != ErrMaxConcurrency {
		t.Errorf("Do without fallback = %v; want ErrMaxConcurrency", err)
	}
	rs := collectorOf(t, "pool").results()
	if len(rs) != 2 || rs[1].Rejects != 1 || rs[1].Errors != 1 || rs[1].ConcurrencyInUse != 1 {
		t.Errorf("collector got %+v; want a rejection with ConcurrencyInUse 1 (2 of 2 running)", rs)
	}
	close(h.release)
	for _, ch := range chs {
		if len(ch) != 0 {
			t.Errorf("a hung run that succeeded sent %v", <-ch)
		}
	}
	waitIdle(t, "pool")
}

// trip fails the command of name n times and moves time past a health
// snapshot.
func trip(t *testing.T, name string, n int, advance func(time.Duration)) {
	t.Helper()
	for range n {
		if err := Do(name, func() error { return errRun }, nil); err != errRun {
			t.Fatalf("Do = %v; want errRun", err)
		}
	}
	advance(time.Second)
}

func TestCircuit(t *testing.T) {
	_, mc := testEngine(t)
	withCollectors()
	ConfigureCommand("cb", CommandConfig{RequestVolumeThreshold: 3, ErrorPercentThreshold: 50, SleepWindow: 5000})
	cb, _, _ := GetCircuit("cb")
	if cb.Name != "cb" || cb.IsOpen() || !cb.AllowRequest() {
		t.Fatalf("new circuit: Name %q, IsOpen %v, AllowRequest %v; want cb, false, true", cb.Name, cb.IsOpen(), cb.AllowRequest())
	}
	trip(t, "cb", 2, mc.Advance)
	if cb.IsOpen() {
		t.Fatal("opened below RequestVolumeThreshold")
	}
	trip(t, "cb", 1, mc.Advance)
	if !cb.IsOpen() {
		t.Fatal("did not open at RequestVolumeThreshold requests, all failed")
	}
	var fbCalls int
	var fbGot error
	err := Do("cb", func() error { t.Error("run called while open"); return nil }, func(err error) error {
		fbCalls++
		fbGot = err
		mc.Advance(1500 * time.Millisecond) // a fallback slower than Timeout
		return nil
	})
	if err != nil || fbCalls != 1 || fbGot != ErrCircuitOpen {
		t.Fatalf("open: Do = %v, fallback called %d times with %v; want nil, once with ErrCircuitOpen", err, fbCalls, fbGot)
	}
	if err := Do("cb", func() error { return nil }, nil); err != ErrCircuitOpen {
		t.Fatalf("open: Do = %v; want ErrCircuitOpen", err)
	}
	rs := collectorOf(t, "cb").results()
	last := rs[len(rs)-2]
	if last.ShortCircuits != 1 || last.Timeouts != 0 || last.FallbackSuccesses != 1 {
		t.Fatalf("short-circuit with a slow fallback recorded %+v; want ShortCircuits 1, no timeout", last)
	}
	// The trial closes it and starts the health over.
	mc.Advance(3 * time.Second) // past the sleep window, since the circuit opened at most 250ms after the failures
	if !cb.AllowRequest() {
		t.Fatal("no trial after SleepWindow")
	}
	if cb.AllowRequest() {
		t.Fatal("a second trial while the first is out")
	}
	if err := cb.ReportEvent([]string{"success"}, mc.Now(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if cb.IsOpen() || !cb.AllowRequest() {
		t.Fatal("a successful trial did not close the circuit")
	}
	mc.Advance(time.Second)
	if cb.IsOpen() {
		t.Fatal("the old failures tripped it again: health was not reset")
	}
}

func TestSuccessWhileUnhealthyDoesNotFlap(t *testing.T) {
	_, mc := testEngine(t)
	ConfigureCommand("flap", CommandConfig{RequestVolumeThreshold: 100})
	cb, _, _ := GetCircuit("flap")
	trip(t, "flap", 10, mc.Advance)
	if err := Do("flap", func() error { return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if cb.IsOpen() {
		t.Fatal("a success opened the circuit")
	}
}

func TestPanicIsAFailure(t *testing.T) {
	e, mc := testEngine(t)
	err := Do("panic", func() error { panic("boom") }, nil)
	var p *command.PanicError
	if !errors.As(err, &p) {
		t.Fatalf("Do = %v; want a *command.PanicError", err)
	}
	err = Do("panic", func() error { return errRun }, func(error) error { panic("fallback boom") })
	if want := "fallback failed with 'panic: fallback boom'. run error was 'run failed'"; err == nil || err.Error() != want {
		t.Fatalf("Do with a panicking fallback = %v; want %q", err, want)
	}
	mc.Advance(time.Second)
	if got := e.coreFor("panic").metrics.CumulativeCount(metricsstream.Failure); got != 2 {
		t.Fatalf("FAILURE = %d; want 2", got)
	}
}

// A caller's context that ends while the fallback runs must not have the
// fallback called a second time: hystrix-go calls it once per command,
// returns its outcome and reports run's failure.
func TestContextEndsDuringFallbackCallsItOnce(t *testing.T) {
	testEngine(t)
	withCollectors()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int32
	err := DoC(ctx, "fbctx", func(context.Context) error { return errRun }, func(_ context.Context, err error) error {
		if calls.Add(1) == 1 {
			cancel() // the caller leaves while the fallback runs
		}
		return errors.New("fb")
	})
	if n := calls.Load(); n != 1 {
		t.Fatalf("fallback called %d times; want 1 (DoC returned %v)", n, err)
	}
	if want := "fallback failed with 'fb'. run error was 'run failed'"; err == nil || err.Error() != want {
		t.Fatalf("DoC = %v; want %q", err, want)
	}
	rs := collectorOf(t, "fbctx").results()
	if len(rs) != 1 || rs[0].Failures != 1 || rs[0].Errors != 1 || rs[0].FallbackFailures != 1 || rs[0].ContextCanceled != 0 {
		t.Fatalf("collector got %+v; want one failure with a failed fallback", rs)
	}
}

// A rejection reports the share of MaxConcurrentRequests in use: the slot
// a timed-out run still holds (the bulkhead the package doc promises) is
// in use, which is why the command was rejected.
func TestConcurrencyInUseCountsTimedOutRuns(t *testing.T) {
	_, mc := testEngine(t)
	withCollectors()
	ConfigureCommand("busy", CommandConfig{MaxConcurrentRequests: 1, Timeout: 100})
	h := newHang()
	ch := GoC(context.Background(), "busy", func(context.Context) error {
		h.started <- struct{}{}
		<-h.release // ignores its context
		return nil
	}, nil)
	h.wait(t, 1)
	mc.Advance(100 * time.Millisecond)
	if err := await(t, ch); err != ErrTimeout {
		t.Fatalf("GoC = %v; want ErrTimeout", err)
	}
	if err := Do("busy", func() error { return nil }, nil); err != ErrMaxConcurrency {
		t.Fatalf("Do = %v; want ErrMaxConcurrency while the timed-out run holds the slot", err)
	}
	close(h.release)
	rs := collectorOf(t, "busy").results()
	if len(rs) != 2 || rs[1].Rejects != 1 || rs[1].ConcurrencyInUse != 1 {
		t.Fatalf("collector got %+v; want a rejection with ConcurrencyInUse 1", rs)
	}
	waitIdle(t, "busy")
}

// The empty name and the name `""` (two quote marks) are two circuits in
// hystrix-go; here the first is the key `""`, which must not make it the
// second's too.
func TestNamesKeepTheirOwnCircuits(t *testing.T) {
	_, mc := testEngine(t)
	ConfigureCommand("", CommandConfig{RequestVolumeThreshold: 2})
	trip(t, "", 2, mc.Advance)
	empty, _, _ := GetCircuit("")
	if !empty.IsOpen() {
		t.Fatal(`precondition: the circuit of "" is open`)
	}
	quotes, _, _ := GetCircuit(`""`)
	if quotes.IsOpen() {
		t.Fatal(`the failures of the name "" opened the circuit of the name ""(two quote marks)`)
	}
	if err := Do(`""`, func() error { return nil }, nil); err != nil {
		t.Fatalf(`Do("\"\"") = %v; want nil`, err)
	}
}

// hystrix-go hands run the caller's context, which lives on after run
// returns: a run that returns an *http.Response made with it leaves its
// body to be read after Do returns. Here run's context is cancelled at
// the timeout and when the caller leaves, and must not be when run has
// returned in time.
func TestRunContextLivesOnAfterRunReturns(t *testing.T) {
	testEngine(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush() // the headers go before the body
		<-release
		io.WriteString(w, "body")
	}))
	defer srv.Close()
	defer srv.Client().CloseIdleConnections()
	var resp *http.Response
	var kept context.Context
	err := DoC(context.Background(), "keep", func(ctx context.Context) error {
		kept = ctx
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		if err != nil {
			return err
		}
		resp, err = srv.Client().Do(req)
		return err
	}, nil)
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The body is read after DoC returned, as hystrix-go's users do.
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "body" {
		t.Fatalf("reading the body after DoC returned: %q, %v; want \"body\"", b, err)
	}
	if err := kept.Err(); err != nil {
		t.Fatalf("after run returned in time its context's Err = %v; want nil", err)
	}
	select {
	case <-kept.Done():
		t.Fatal("after run returned in time its context is done")
	default:
	}

	// The caller's leaving still cancels run's context while run runs.
	ctx, cancel := context.WithCancel(context.Background())
	h := newHang()
	defer close(h.release)
	var runCtx atomic.Value
	ch := doAsync(ctx, "keep", func(ctx context.Context) error {
		runCtx.Store(ctx)
		h.started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}, nil)
	h.wait(t, 1)
	cancel()
	if err := await(t, ch); err != context.Canceled {
		t.Fatalf("DoC = %v; want context.Canceled", err)
	}
	// run's context ends with the caller's on a goroutine of its own
	// (context.AfterFunc), which may come just after DoC returned.
	select {
	case <-runCtx.Load().(context.Context).Done():
	case <-time.After(10 * time.Second):
		t.Fatal("run's context did not end once the caller left")
	}
	if err := runCtx.Load().(context.Context).Err(); err != context.Canceled {
		t.Fatalf("run's context Err = %v once the caller left; want context.Canceled", err)
	}
}

// hystrix-go hands run the caller's context: after run returns, the
// caller's cancellation (or deadline) still ends it, so a response body
// run returned stops being read, and a goroutine run left waiting on the
// context ends, when the caller gives up. Here run's context lives on
// after run returns, but must still end with the caller's.
func TestRunContextEndsWithTheCallerAfterRunReturns(t *testing.T) {
	testEngine(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var kept context.Context
	if err := DoC(ctx, "follow", func(ctx context.Context) error { kept = ctx; return nil }, nil); err != nil {
		t.Fatal(err)
	}
	if err := kept.Err(); err != nil {
		t.Fatalf("after run returned in time its context's Err = %v; want nil", err)
	}
	cancel()
	select {
	case <-kept.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the caller's cancellation after run returned did not end run's context")
	}
	if err := kept.Err(); err != context.Canceled {
		t.Fatalf("run's context Err = %v after the caller's cancellation; want context.Canceled", err)
	}
}

// opaqueContext hides its cancellation from package context, which then
// watches it with a goroutine of its own per registration (AfterFunc,
// WithCancel), so that a registration left behind shows as a goroutine.
type opaqueContext struct{ context.Context }

// Following the caller's context after run returns must not keep a
// registration on it per call: with a caller's context that never ends,
// each would stay for the life of the process.
func TestRunContextFollowsTheCallerWithoutLeaking(t *testing.T) {
	testEngine(t)
	before := contextWatchers()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	caller := opaqueContext{ctx}
	for range 3 {
		if err := DoC(caller, "longlived", func(context.Context) error { return nil }, nil); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for range 200 { // the registrations go once run's contexts are collected
		runtime.GC()
		if n = contextWatchers(); n <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d goroutines watch a caller's context that has not ended after run's contexts are gone; want %d", n, before)
}

// contextWatchers counts the goroutines package context runs to watch a
// context it cannot see into.
func contextWatchers() int {
	buf := make([]byte, 1<<20)
	return strings.Count(string(buf[:runtime.Stack(buf, true)]), "propagateCancel.func")
}

// Once run has returned, its context no longer ends at the timeout, so
// its Deadline must not say it does: code that sets a socket's deadline
// from the context (go-redis, net.Dialer) would otherwise time out what
// run returned at the old timeout. It is the caller's, as in hystrix-go.
func TestRunContextDeadlineIsTheCallersAfterRunReturns(t *testing.T) {
	testEngine(t)
	var kept context.Context
	if err := DoC(context.Background(), "deadline-after", func(ctx context.Context) error {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("while run runs its context has no deadline; want the timeout's")
		}
		kept = ctx
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	if d, ok := kept.Deadline(); ok {
		t.Fatalf("after run returned its context's Deadline = %v; want none, the caller's", d)
	}
}

// ConcurrencyInUse is hystrix-go's executorPool.ActiveCount()/Max: the
// slots held by runs. A command whose run has failed gives its slot back
// before its fallback runs (here as there: a new command is let through),
// so commands busy in their fallbacks are not in use, and the share never
// passes 1.
func TestConcurrencyInUseLeavesOutFallbacks(t *testing.T) {
	testEngine(t)
	withCollectors()
	ConfigureCommand("fbuse", CommandConfig{MaxConcurrentRequests: 2})
	const inFallback = 3
	started := make(chan struct{}, inFallback)
	release := make(chan struct{})
	var dones []<-chan error
	for range inFallback {
		dones = append(dones, doAsync(context.Background(), "fbuse", func(context.Context) error { return errRun },
			func(context.Context, error) error {
				started <- struct{}{}
				<-release
				return nil
			}))
		await(t, started) // one at a time: each run takes and gives back a slot
	}
	err := Do("fbuse", func() error { return nil }, nil)
	close(release)
	for _, d := range dones {
		if err := await(t, d); err != nil {
			t.Fatalf("a command whose fallback succeeded answered %v", err)
		}
	}
	if err != nil {
		t.Fatalf("Do while the other commands' fallbacks run = %v; want nil (their slots are free)", err)
	}
	rs := collectorOf(t, "fbuse").results()
	if len(rs) != inFallback+1 {
		t.Fatalf("collector got %d updates; want %d", len(rs), inFallback+1)
	}
	if got := rs[0]; got.Successes != 1 || got.ConcurrencyInUse != 0 {
		t.Fatalf("the success's ConcurrencyInUse = %v; want 0: no run holds a slot, %d commands are in their fallbacks (hystrix-go counts tickets)",
			got.ConcurrencyInUse, inFallback)
	}
}
