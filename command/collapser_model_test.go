package command

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// Requests queued on a collapser, callers leaving, windows closing,
// batches filling up, batches that answer at once or are held while
// other requests come, and the request scope ending, in a random order,
// give what a model of Hystrix's RequestCollapser says: which batches run
// with which arguments in which order (equal arguments sharing a place,
// or refused when the request cache is off; with WithCacheKey in a
// request scope, a request served by the place of an earlier one in
// another batch unless every caller of that place left before its
// result; a place whose callers all left taken out of a batch still
// collecting; an empty batch never run),
// what every caller gets (its result, the batch's failure in a
// BatchError, ErrDuplicateArgument, or the error of its leaving), the
// cancellation of a started batch once every caller of its places has
// left and never before, and the collapser's counts of batches and
// requests batched and served from the cache.
func TestCollapserBatchesAsTheModelSays(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := newCollapserModel(rt)
		defer m.reg.Close()
		rt.Repeat(map[string]func(*rapid.T){
			"queue":    m.queue,
			"leave":    m.leave,
			"advance":  m.advance,
			"release":  m.release,
			"endScope": m.endScope,
		})
		m.finish()
	})
}

// The ways a batch answers.
const (
	batchSucceeds = iota
	batchFails
	batchMiscounts // one result short
	batchOutcomes
)

var errBatchFailed = errors.New("the downstream failed")

// batchCall is one call of the model's batch function.
type batchCall struct {
	ids     []int
	ctx     context.Context
	release chan int // the outcome of a held call
}

type collapserModel struct {
	rt  *rapid.T
	reg *Registry
	mc  *clock.Manual
	c   *Collapser[int, string]
	cfg CollapserConfig
	// cached says whether a request may be served by the place of an
	// earlier one of the same key in the request context's cache, in
	// another batch (WithCacheKey, a request scope, the cache on).
	cached bool
	scope  context.Context // the request context, or Background for GlobalScope
	end    context.CancelFunc

	calls chan *batchCall
	plan  struct {
		sync.Mutex
		outcome int
		hold    bool
	}

	now       time.Duration
	scopeDone bool
	pending   *modelBatch   // collecting requests
	held      []*modelBatch // started, waiting for release
	callers   []*modelCaller
	cache     map[int]*modelPlace // by argument, when cached
	batches   int                 // batches run
	batched   int                 // places in the batches run
	fromCache int                 // requests the cache served
}

type modelBatch struct {
	places   []*modelPlace
	closesAt time.Duration
	call     *batchCall
	live     int // places some caller still waits for, once started
}

type modelPlace struct {
	arg       int
	batch     *modelBatch
	waiters   []*modelCaller
	resolved  bool
	outcome   int  // once resolved
	abandoned bool // every caller left before the result
}

type modelCaller struct {
	id    int
	arg   int
	f     *observable.Future[string]
	place *modelPlace
	left  bool
	// want says whether a result is the one the model expects, and what
	// it is; nil while the caller waits.
	want     func(v string, err error) bool
	wantText string
}

func newCollapserModel(rt *rapid.T) *collapserModel {
	mc := clock.NewManual(requestT0)
	m := &collapserModel{rt: rt, mc: mc, reg: NewRegistry(WithClock(mc)), calls: make(chan *batchCall, 64)}
	m.cfg = CollapserConfig{
		MaxRequestsInBatch:   rapid.IntRange(0, 3).Draw(rt, "maxRequestsInBatch"),
		Delay:                10 * time.Millisecond,
		Scope:                Scope(rapid.IntRange(0, 1).Draw(rt, "scope")),
		RequestCacheDisabled: rapid.Bool().Draw(rt, "requestCacheDisabled"),
	}
	var parent context.Context
	parent, m.end = context.WithCancel(context.Background())
	m.scope = parent
	if m.cfg.Scope == RequestScope {
		m.scope = WithRequestContext(parent)
	}
	cfg := Config{Timeout: -1, MaxConcurrentRequests: 100, Breaker: breaker.Config{ForceClosed: true}}
	m.c = NewCollapser("GetUser", m.batch, WithRegistry(m.reg), WithConfig(cfg), WithCollapserConfig(m.cfg))
	if rapid.Bool().Draw(rt, "withCacheKey") {
		m.c = m.c.WithCacheKey(func(id int) string { return "id" + itoa(id) })
		m.cached = m.cfg.Scope == RequestScope && !m.cfg.RequestCacheDisabled
		m.cache = make(map[int]*modelPlace)
	}
	return m
}

// batch is the batch function: it tells the test of its call, then
// answers as planned, at once or when released (or when its context
// ends).
func (m *collapserModel) batch(ctx context.Context, ids []int) ([]string, error) {
	m.plan.Lock()
	outcome, hold := m.plan.outcome, m.plan.hold
	m.plan.Unlock()
	call := &batchCall{ids: slices.Clone(ids), ctx: ctx}
	if hold {
		call.release = make(chan int)
	}
	m.calls <- call
	if hold {
		select {
		case outcome = <-call.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	switch outcome {
	case batchFails:
		return nil, errBatchFailed
	case batchMiscounts:
		ids = ids[1:]
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "user" + itoa(id)
	}
	return out, nil
}

// drawPlan draws how the next batch to start answers; only one that
// starts on a goroutine of its own (a full one) may be held, since a
// batch whose window closes runs on the goroutine moving the clock.
func (m *collapserModel) drawPlan(rt *rapid.T, mayHold bool) {
	outcome := rapid.IntRange(0, batchOutcomes-1).Draw(rt, "outcome")
	hold := mayHold && rapid.Bool().Draw(rt, "hold")
	m.plan.Lock()
	m.plan.outcome, m.plan.hold = outcome, hold
	m.plan.Unlock()
}

func (m *collapserModel) queue(rt *rapid.T) {
	arg := rapid.IntRange(1, 4).Draw(rt, "arg")
	m.drawPlan(rt, true)
	k := &modelCaller{id: len(m.callers), arg: arg}
	m.callers = append(m.callers, k)
	k.f = m.c.Queue(m.scope, arg) // the caller leaves with the Future's Cancel, or with the scope

	switch {
	case m.scopeDone:
		k.wantErr("the scope's end", func(err error) bool {
			return errors.Is(err, context.Canceled) || errors.Is(err, ErrRequestContextDone)
		})
		m.wait(k)
		return
	case m.cached && m.cache[arg] != nil && !m.cache[arg].abandoned:
		k.place = m.cache[arg]
		m.fromCache++
		if k.place.resolved {
			k.place.tell(k)
			m.wait(k)
			return
		}
		k.place.waiters = append(k.place.waiters, k)
		return
	case m.pending == nil:
		m.pending = &modelBatch{closesAt: m.now + m.cfg.Delay}
	}
	b := m.pending
	if i := slices.IndexFunc(b.places, func(p *modelPlace) bool { return p.arg == arg }); i >= 0 {
		if m.cfg.RequestCacheDisabled {
			k.wantErr("ErrDuplicateArgument", func(err error) bool { return errors.Is(err, ErrDuplicateArgument) })
			m.wait(k)
			return
		}
		k.place = b.places[i]
		k.place.waiters = append(k.place.waiters, k)
		return
	}
	k.place = &modelPlace{arg: arg, batch: b, waiters: []*modelCaller{k}}
	b.places = append(b.places, k.place)
	if m.cached {
		m.cache[arg] = k.place
	}
	if m.cfg.MaxRequestsInBatch > 0 && len(b.places) >= m.cfg.MaxRequestsInBatch {
		m.pending = nil
		m.started(rt, b)
	}
}

// started is b starting: its call comes, with its places' arguments in
// order, and is answered at once or held.
func (m *collapserModel) started(rt *rapid.T, b *modelBatch) {
	b.call = m.nextCall(rt)
	want := make([]int, len(b.places))
	for i, p := range b.places {
		want[i] = p.arg
	}
	if !slices.Equal(b.call.ids, want) {
		rt.Fatalf("batch of %v, want %v", b.call.ids, want)
	}
	m.batches++
	m.batched += len(b.places)
	b.live = len(b.places)
	m.plan.Lock()
	outcome, hold := m.plan.outcome, m.plan.hold
	m.plan.Unlock()
	if hold {
		m.held = append(m.held, b)
		return
	}
	m.answered(b, outcome)
}

// answered is b's call returning with outcome: every place is resolved,
// and every caller still there gets its result.
func (m *collapserModel) answered(b *modelBatch, outcome int) {
	for _, p := range b.places {
		p.resolved, p.outcome = true, outcome
		for _, k := range p.waiters {
			p.tell(k)
			m.wait(k)
		}
	}
}

// tell sets what k, a caller of p, gets once p is resolved.
func (p *modelPlace) tell(k *modelCaller) {
	switch p.outcome {
	case batchSucceeds:
		want := "user" + itoa(p.arg)
		k.want, k.wantText = func(v string, err error) bool { return err == nil && v == want }, want
	case batchFails:
		k.wantBatchError(errBatchFailed)
	case batchMiscounts:
		k.wantBatchError(ErrBatchResultCount)
	}
}

func (k *modelCaller) wantErr(text string, is func(error) bool) {
	k.want, k.wantText = func(_ string, err error) bool { return err != nil && is(err) }, text
}

func (k *modelCaller) wantBatchError(cause error) {
	k.wantErr("a BatchError of "+cause.Error(), func(err error) bool {
		var be *BatchError
		return errors.As(err, &be) && errors.Is(err, cause)
	})
}

// nextCall returns the batch function's next call, which must come.
func (m *collapserModel) nextCall(rt *rapid.T) *batchCall {
	return recv(rt, m.calls, "a batch to run")
}

// noCall checks that no batch ran.
func (m *collapserModel) noCall(rt *rapid.T) {
	select {
	case call := <-m.calls:
		rt.Fatalf("a batch of %v ran", call.ids)
	default:
	}
}

// wait waits for k's result and checks it.
func (m *collapserModel) wait(k *modelCaller) {
	recv(m.rt, k.f.Done(), fmt.Sprintf("caller %d (%d), who should get %s", k.id, k.arg, k.wantText))
	v, err := k.f.Get(context.Background())
	if !k.want(v, err) {
		m.rt.Fatalf("caller %d (%d) got %q, %v; want %s", k.id, k.arg, v, err, k.wantText)
	}
}

func (m *collapserModel) leave(rt *rapid.T) {
	var waiting []*modelCaller
	for _, k := range m.callers {
		if k.want == nil {
			waiting = append(waiting, k)
		}
	}
	if len(waiting) == 0 {
		rt.Skip("nobody waits")
	}
	k := rapid.SampledFrom(waiting).Draw(rt, "leaving")
	k.f.Cancel()
	k.left = true
	k.wantErr("context.Canceled", func(err error) bool { return errors.Is(err, context.Canceled) })
	m.wait(k)
	p := k.place
	p.waiters = slices.DeleteFunc(p.waiters, func(x *modelCaller) bool { return x == k })
	if len(p.waiters) > 0 {
		return
	}
	p.abandoned = true
	b := p.batch
	if b.call == nil { // still collecting
		b.places = slices.DeleteFunc(b.places, func(x *modelPlace) bool { return x == p })
		return
	}
	if b.live--; b.live == 0 {
		recv(rt, b.call.ctx.Done(), fmt.Sprintf("the cancellation of the batch of %v, every caller of which left", b.call.ids))
		m.held = slices.DeleteFunc(m.held, func(x *modelBatch) bool { return x == b })
		for _, p := range b.places {
			p.resolved = true
		}
	}
}

func (m *collapserModel) advance(rt *rapid.T) {
	d := rapid.SampledFrom([]time.Duration{time.Millisecond, m.cfg.Delay - time.Nanosecond, m.cfg.Delay, 3 * m.cfg.Delay}).Draw(rt, "advanceBy")
	m.drawPlan(rt, false)
	m.mc.Advance(d)
	m.now += d
	b := m.pending
	if b == nil || m.now < b.closesAt {
		m.noCall(rt)
		return
	}
	m.pending = nil
	if len(b.places) == 0 {
		m.noCall(rt)
		return
	}
	m.started(rt, b)
}

func (m *collapserModel) release(rt *rapid.T) {
	if len(m.held) == 0 {
		rt.Skip("no batch is held")
	}
	b := rapid.SampledFrom(m.held).Draw(rt, "released")
	if err := b.call.ctx.Err(); err != nil {
		rt.Fatalf("the batch of %v, which callers wait for, was cancelled: %v", b.call.ids, err)
	}
	outcome := rapid.IntRange(0, batchOutcomes-1).Draw(rt, "outcome")
	m.held = slices.DeleteFunc(m.held, func(x *modelBatch) bool { return x == b })
	b.call.release <- outcome
	m.answered(b, outcome)
}

// endScope ends the request context: the collecting batch fails, the
// held ones are cancelled, every caller's context ends with it, and
// later requests fail.
func (m *collapserModel) endScope(rt *rapid.T) {
	if m.cfg.Scope != RequestScope || m.scopeDone {
		rt.Skip("no request scope to end")
	}
	m.end()
	m.scopeDone = true
	for _, k := range m.callers {
		if k.want == nil {
			k.wantErr("the scope's end", func(err error) bool {
				return errors.Is(err, context.Canceled) || errors.Is(err, ErrRequestContextDone)
			})
			m.wait(k)
		}
	}
	for _, b := range m.held {
		<-b.call.ctx.Done()
	}
	m.held, m.pending = nil, nil
}

// finish releases what is held, closes the window, and checks what every
// caller got and the collapser's counts.
func (m *collapserModel) finish() {
	m.drawPlan(m.rt, false)
	for len(m.held) > 0 {
		m.release(m.rt)
	}
	if b := m.pending; b != nil {
		m.mc.Advance(b.closesAt - m.now)
		m.now, m.pending = b.closesAt, nil
		if len(b.places) > 0 {
			m.started(m.rt, b)
		} else {
			m.noCall(m.rt)
		}
	}
	for _, k := range m.callers {
		if k.want == nil {
			m.rt.Fatalf("caller %d (%d) still waits at the end", k.id, k.arg)
		}
		m.wait(k)
	}
	m.mc.Advance(time.Second) // closes the metrics' bucket
	metrics := m.c.Metrics()
	if got := metrics.CumulativeCount(metricsstream.CollapserBatchExecuted); got != int64(m.batches) {
		var unexpected [][]int
		for len(m.calls) > 0 {
			unexpected = append(unexpected, (<-m.calls).ids)
		}
		m.rt.Fatalf("%d batches counted, want %d (batches the model did not expect: %v)", got, m.batches, unexpected)
	}
	if got := metrics.CumulativeCount(metricsstream.CollapserAddedToBatch); got != int64(m.batched) {
		m.rt.Fatalf("%d requests batched counted, want %d", got, m.batched)
	}
	if got := metrics.CumulativeCount(metricsstream.CollapserResponseFromCache); got != int64(m.fromCache) {
		m.rt.Fatalf("%d responses from the cache counted, want %d", got, m.fromCache)
	}
	m.end()
}
