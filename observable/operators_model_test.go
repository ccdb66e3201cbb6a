package observable

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// TestOperatorsFollowTheModel builds random Observables of ints from
// every kind of source (Just, Empty, Error, FromFunc, Create on the
// subscribing goroutine or on one of its own, a ReplaySubject,
// FromChannel, Defer) and chains of operators (Map, Filter, Take, Skip,
// Scan, DoOnNext, OnErrorResumeNext, Retry, Cache, SubscribeOn, Timeout
// and HedgeStream whose time never comes, FlatMap, Concat, Merge, Zip2), and consumes each twice,
// in a random way (First, Last, ToSlice, a Future's Get, Subscribe,
// ReplayNow then ToSlice) under a context that cannot end or one that
// can: what each gives must be what a model of the operators on finite
// sequences says. A Merge whose first source emits on a goroutine of its
// own interleaves; the model then checks that the values are an
// interleaving of its sources'.
func TestOperatorsFollowTheModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		g := &modelGen{t: rt, clk: clock.NewManual(time.Unix(0, 0))}
		o, want := g.root()
		for range 2 { // cold: a second subscription gives the same
			g.consume(o, want)
		}
	})
}

// modelSeq is the model of an Observable: the values of one subscription and
// how it ends: with err, completion if err is nil, or never if hang is
// set (err is then nil).
type modelSeq struct {
	vals []int
	err  error
	hang bool
}

func (s modelSeq) String() string {
	if s.hang {
		return fmt.Sprintf("%v then nothing", s.vals)
	}
	return fmt.Sprintf("%v then %v", s.vals, s.err)
}

// outcome is what the model allows a subscription to give: exactly s, or,
// for a Merge whose first source is asynchronous, any interleaving of
// merged's two sequences, which complete.
type outcome struct {
	s      modelSeq
	merged *[2]modelSeq
}

var (
	modelErrs = []error{errors.New("e0"), errors.New("e1"), errors.New("e2")}
	errSeven  = errors.New("seven")
)

type modelGen struct {
	t   *rapid.T
	clk *clock.Manual
	// running counts the goroutines of sources that never end by
	// themselves, until they see their subscription end. (Not a
	// WaitGroup: a subscription may still be on its way, and start one,
	// as its subscriber leaves.)
	running atomic.Int64
}

// node is a generated Observable, its model, and whether it terminates
// before a subscription returns, on the subscribing goroutine (sync).
type node struct {
	o    Observable[int]
	s    modelSeq
	sync bool
	desc string
}

func (g *modelGen) root() (Observable[int], outcome) {
	a := g.node(3, "a")
	if rapid.Bool().Draw(g.t, "merge at root") {
		b := g.node(2, "b")
		if !a.sync && a.s.err == nil && b.s.err == nil && !a.s.hang && !b.s.hang {
			g.t.Logf("root: Merge(%s, %s)", a.desc, b.desc)
			return Merge(a.o, b.o), outcome{merged: &[2]modelSeq{a.s, b.s}}
		}
	}
	g.t.Logf("root: %s = %v", a.desc, a.s)
	return a.o, outcome{s: a.s}
}

func (g *modelGen) seqOf(label string) modelSeq {
	vals := rapid.SliceOfN(rapid.IntRange(0, 9), 0, 4).Draw(g.t, label+" values")
	switch rapid.IntRange(0, 2).Draw(g.t, label+" end") {
	case 1:
		return modelSeq{vals: vals, err: modelErrs[rapid.IntRange(0, len(modelErrs)-1).Draw(g.t, label+" error")]}
	case 2:
		return modelSeq{vals: vals, hang: true}
	}
	return modelSeq{vals: vals}
}

func (g *modelGen) source(label string) node {
	s := g.seqOf(label)
	kinds := []string{"create", "create async", "replay subject", "defer"}
	if s.err == nil {
		kinds = append(kinds, "channel")
	}
	switch {
	case s.hang:
		if len(s.vals) == 0 {
			kinds = append(kinds, "never")
		}
	case s.err != nil && len(s.vals) == 0:
		kinds = append(kinds, "error")
	case s.err == nil && len(s.vals) == 0:
		kinds = append(kinds, "empty")
	}
	if s.err == nil && !s.hang {
		kinds = append(kinds, "just")
		if len(s.vals) == 1 {
			kinds = append(kinds, "func")
		}
	}
	if s.err != nil && len(s.vals) == 0 {
		kinds = append(kinds, "func")
	}
	kind := rapid.SampledFrom(kinds).Draw(g.t, label+" source")
	desc := fmt.Sprintf("%s%v", kind, s)
	n := node{s: s, sync: !s.hang, desc: desc}
	switch kind {
	case "just":
		n.o = Just(s.vals...)
	case "empty":
		n.o = Empty[int]()
	case "error":
		n.o = Error[int](s.err)
	case "func":
		n.o = FromFunc(func(context.Context) (int, error) {
			if s.err != nil {
				return 0, s.err
			}
			return s.vals[0], nil
		})
	case "create":
		n.o = Create(func(_ context.Context, o Observer[int]) { emit(o, s) })
	case "create async":
		n.sync = false
		n.o = Create(func(ctx context.Context, o Observer[int]) {
			if !s.hang {
				go emit(o, s)
				return
			}
			g.running.Add(1)
			go func() {
				defer g.running.Add(-1)
				emit(o, s)
				<-ctx.Done()
			}()
		})
	case "never":
		n.o = Never[int]()
	case "replay subject":
		sub := NewReplaySubject[int](0)
		emit(sub, s)
		n.o = sub.Observable()
	case "channel":
		n.sync = false
		n.o = Defer(func() Observable[int] {
			ch := make(chan int, len(s.vals))
			for _, v := range s.vals {
				ch <- v
			}
			if !s.hang {
				close(ch)
			}
			return FromChannel(ch)
		})
	case "defer":
		n.o = Defer(func() Observable[int] { return Create(func(_ context.Context, o Observer[int]) { emit(o, s) }) })
	}
	return n
}

func emit(o Observer[int], s modelSeq) {
	for _, v := range s.vals {
		o.OnNext(v)
	}
	switch {
	case s.hang:
		return
	case s.err != nil:
		o.OnError(s.err)
		return
	}
	o.OnCompleted()
}

// node draws an Observable of at most depth operators deep.
func (g *modelGen) node(depth int, label string) node {
	if depth == 0 || rapid.IntRange(0, 3).Draw(g.t, label+" leaf") == 0 {
		return g.source(label)
	}
	op := rapid.SampledFrom([]string{
		"map", "filter", "take", "skip", "scan", "doOnNext", "resume", "retry",
		"cache", "subscribeOn", "timeout", "hedge", "flatMap", "concat", "merge", "zip2",
	}).Draw(g.t, label+" op")
	a := g.node(depth-1, label+".a")
	n := node{s: a.s, sync: a.sync, desc: fmt.Sprintf("%s(%s)", op, a.desc)}
	switch op {
	case "map":
		n.o = Map(a.o, func(v int) int { return v*3 + 1 })
		n.s.vals = mapInts(a.s.vals, func(v int) int { return v*3 + 1 })
	case "filter":
		n.o = a.o.Filter(func(v int) bool { return v%2 == 0 })
		n.s.vals = slices.DeleteFunc(slices.Clone(a.s.vals), func(v int) bool { return v%2 != 0 })
	case "take":
		k := rapid.IntRange(0, 4).Draw(g.t, label+" take")
		n.desc = fmt.Sprintf("take%d(%s)", k, a.desc)
		n.o = a.o.Take(k)
		if len(a.s.vals) >= k {
			n.s = modelSeq{vals: slices.Clone(a.s.vals[:k])}
		}
	case "skip":
		k := rapid.IntRange(0, 4).Draw(g.t, label+" skip")
		n.desc = fmt.Sprintf("skip%d(%s)", k, a.desc)
		n.o = a.o.Skip(k)
		n.s.vals = slices.Clone(a.s.vals[min(k, len(a.s.vals)):])
	case "scan":
		n.o = Scan(a.o, 0, func(acc, v int) int { return acc + v })
		acc := 0 // the seed comes first, at subscription
		n.s.vals = concatInts([]int{0}, mapInts(a.s.vals, func(v int) int { acc += v; return acc }))
	case "doOnNext":
		n.o = a.o.DoOnNext(func(int) {})
	case "resume":
		b := g.node(depth-1, label+".b")
		n.desc = fmt.Sprintf("resume(%s, %s)", a.desc, b.desc)
		n.o = a.o.OnErrorResumeNext(func(error) Observable[int] { return b.o })
		if a.s.err != nil {
			n.s = concatModel(modelSeq{vals: a.s.vals}, b.s)
			n.sync = a.sync && b.sync
		}
	case "retry":
		k := rapid.IntRange(1, 3).Draw(g.t, label+" attempts")
		n.desc = fmt.Sprintf("retry%d(%s)", k, a.desc)
		p := RetryPolicy{MaxAttempts: k, Rand: func() float64 { return 0 }}
		n.o = a.o.RetryOn(p, g.clk)
		if a.s.err != nil {
			var vals []int
			for range k {
				vals = concatInts(vals, a.s.vals)
			}
			n.s.vals = vals
		}
	case "flatMap":
		// Each value v becomes v and v+5, or fails with an error of its
		// own if it is 7: synchronous inner Observables, which end before
		// the next value of a comes.
		n.o = FlatMap(a.o, func(v int) Observable[int] {
			if v == 7 {
				return Error[int](errSeven)
			}
			return Just(v, v+5)
		})
		n.s = modelSeq{}
		for _, v := range a.s.vals {
			if v == 7 {
				n.s.err = errSeven
				break
			}
			n.s.vals = append(n.s.vals, v, v+5)
		}
		if n.s.err == nil {
			n.s.err, n.s.hang = a.s.err, a.s.hang
		}
	case "cache":
		// Cache never ends its subscription: a source that never ends
		// would run for good.
		n.o = a.o.Cache()
		if a.s.hang {
			n.desc = a.desc
			n.o = a.o
		}
	case "subscribeOn":
		n.o = a.o.SubscribeOn(NewGoroutine)
		n.sync = false
	case "timeout":
		n.o = a.o.TimeoutOn(time.Hour, g.clk)
	case "hedge":
		n.o = HedgeStreamOn(a.o, HedgePolicy{MaxHedges: 1, Delay: func() time.Duration { return time.Hour }}, g.clk)
	case "concat", "merge", "zip2":
		b := g.node(depth-1, label+".b")
		n.desc = fmt.Sprintf("%s(%s, %s)", op, a.desc, b.desc)
		n.sync = a.sync && b.sync
		switch {
		case op == "zip2" && (a.sync || a.s.err == nil && b.s.err == nil):
			// a has ended when b is subscribed, or neither fails.
			n.o = Zip2(a.o, b.o, func(x, y int) int { return x*10 + y })
			n.s = zipModel(a.s, b.s)
		case op == "merge" && a.sync:
			// a ends before b is subscribed: the values come in order.
			n.o = Merge(a.o, b.o)
			n.s = concatModel(a.s, b.s)
		default:
			n.desc = fmt.Sprintf("concat(%s, %s)", a.desc, b.desc)
			n.o = Concat(a.o, b.o)
			n.s = concatModel(a.s, b.s)
		}
	}
	return n
}

func concatModel(a, b modelSeq) modelSeq {
	if a.err != nil || a.hang {
		return a
	}
	return modelSeq{vals: concatInts(a.vals, b.vals), err: b.err, hang: b.hang}
}

// zipModel is Zip2 of a, which has ended when b is subscribed, or of two
// sequences neither of which fails. The zip completes once a side has
// completed and each of its values has its pair; the shorter side's end
// is the zip's if it fails or never comes.
func zipModel(a, b modelSeq) modelSeq {
	if a.err != nil {
		return modelSeq{err: a.err}
	}
	n := min(len(a.vals), len(b.vals))
	var vals []int
	for i := range n {
		vals = append(vals, a.vals[i]*10+b.vals[i])
	}
	switch {
	case !a.hang && len(a.vals) <= len(b.vals), !b.hang && b.err == nil && len(b.vals) <= len(a.vals):
		return modelSeq{vals: vals}
	case len(b.vals) < len(a.vals):
		return modelSeq{vals: vals, err: b.err, hang: b.hang}
	}
	return modelSeq{vals: vals, hang: true} // a never ends, and has no more values than b
}

func mapInts(vs []int, f func(int) int) []int {
	var out []int
	for _, v := range vs {
		out = append(out, f(v))
	}
	return out
}

func concatInts(a, b []int) []int {
	return append(slices.Clone(a), b...)
}

// consume subscribes to o in a drawn way and checks the result against
// want. A subscription that never ends by itself is ended by its context:
// once it has had every value (or at once if it has none), or, for First,
// once it has been subscribed with no value to come. Every source that
// never ends by itself must then see its subscription end, whether it
// was what kept the subscription going or was left behind by a Take, a
// First or a Zip2 that had what it needed.
func (g *modelGen) consume(o Observable[int], want outcome) {
	ctx := context.Background()
	hang := want.merged == nil && want.s.hang
	cancel := func() {}
	if hang || rapid.Bool().Draw(g.t, "context can end") {
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
	}
	how := rapid.SampledFrom([]string{"First", "Last", "ToSlice", "Future", "Subscribe", "ReplayNow"}).Draw(g.t, "consumer")
	if hang && (how != "First" || len(want.s.vals) == 0) {
		if n := int64(len(want.s.vals)); n == 0 || how == "First" {
			o = o.DoOnSubscribe(func() { go cancel() })
		} else {
			var seen atomic.Int64
			o = o.DoOnNext(func(int) {
				if seen.Add(1) == n {
					cancel()
				}
			})
		}
	}
	vals := want.s.vals
	if hang && (how != "First" || len(vals) == 0) {
		want = outcome{s: modelSeq{err: context.Canceled}}
	}
	switch how {
	case "First":
		v, err := o.First(ctx)
		g.checkOne(how, want, v, err, true)
	case "Last":
		v, err := o.Last(ctx)
		g.checkOne(how, want, v, err, false)
	case "Future":
		v, err := o.ToFuture(ctx).Get(ctx)
		g.checkOne(how, want, v, err, false)
	case "ToSlice":
		vs, err := o.ToSlice(ctx)
		g.checkAll(how, want, vs, err)
	case "ReplayNow":
		vs, err := o.ReplayNow(ctx).ToSlice(ctx)
		if hang {
			// The replay may end first, with the context's error, after
			// the values it had.
			vs = nil
		}
		g.checkAll(how, want, vs, err)
	case "Subscribe":
		var mu sync.Mutex // a value on its way as the context ends may come after Done
		var vs []int
		var failure error
		ended := false
		sub := o.SubscribeFunc(ctx, func(v int) {
			mu.Lock()
			vs = append(vs, v)
			mu.Unlock()
		}, func(err error) { failure, ended = err, true }, func() { ended = true })
		<-sub.Done()
		mu.Lock()
		defer mu.Unlock()
		if hang {
			// The value that ends the context may or may not pass.
			if ended || len(vs) < len(vals)-1 || len(vs) > len(vals) || !slices.Equal(vs, vals[:len(vs)]) {
				g.t.Fatalf("Subscribe: %v, ended %v (%v); want most of %v, then nothing", vs, ended, failure, vals)
			}
			break
		}
		g.checkAll(how, want, vs, failure)
	}
	g.waitSources()
}

// waitSources waits for every source that never ends by itself to see
// its subscription end.
func (g *modelGen) waitSources() {
	for deadline := time.Now().Add(10 * time.Second); g.running.Load() != 0; runtime.Gosched() {
		if time.Now().After(deadline) {
			g.t.Fatalf("a source that never ends still runs 10s after its subscriber left")
		}
	}
}

// checkOne checks the result of First (first set) or Last.
func (g *modelGen) checkOne(how string, want outcome, v int, err error, first bool) {
	if want.merged != nil {
		a, b := want.merged[0], want.merged[1]
		switch {
		case len(a.vals)+len(b.vals) == 0:
			if !errors.Is(err, ErrEmpty) {
				g.t.Fatalf("%s of a Merge of nothing: %v, %v; want ErrEmpty", how, v, err)
			}
		case err != nil:
			g.t.Fatalf("%s of a Merge: %v", how, err)
		case first && !(len(a.vals) > 0 && v == a.vals[0] || len(b.vals) > 0 && v == b.vals[0]),
			!first && !(len(a.vals) > 0 && v == a.vals[len(a.vals)-1] || len(b.vals) > 0 && v == b.vals[len(b.vals)-1]):
			g.t.Fatalf("%s of Merge(%v, %v): %d, the end of neither", how, a, b, v)
		}
		return
	}
	s := want.s
	var wantV int
	var wantErr error
	switch {
	case first && len(s.vals) > 0:
		wantV = s.vals[0]
	case s.err != nil:
		wantErr = s.err
	case len(s.vals) == 0:
		wantErr = ErrEmpty
	default:
		wantV = s.vals[len(s.vals)-1]
	}
	if v != wantV || !errors.Is(err, wantErr) || (wantErr == nil) != (err == nil) {
		g.t.Fatalf("%s: %d, %v; want %d, %v (the model: %v)", how, v, err, wantV, wantErr, s)
	}
}

// checkAll checks every value and the end of a subscription.
func (g *modelGen) checkAll(how string, want outcome, vs []int, err error) {
	if want.merged != nil {
		a, b := want.merged[0], want.merged[1]
		if err != nil || !interleaves(vs, a.vals, b.vals) {
			g.t.Fatalf("%s of Merge(%v, %v): %v, %v; want an interleaving of the two", how, a, b, vs, err)
		}
		return
	}
	s := want.s
	wantVals := s.vals
	if how == "ToSlice" && len(wantVals) == 0 {
		wantVals = nil
	}
	if !slices.Equal(vs, wantVals) || err != s.err {
		g.t.Fatalf("%s: %v then %v; want %v", how, vs, err, s)
	}
}

// interleaves reports whether vs is an interleaving of a and b.
func interleaves(vs, a, b []int) bool {
	if len(vs) != len(a)+len(b) {
		return false
	}
	// can[i][j]: vs[:i+j] interleaves a[:i] and b[:j].
	can := make([][]bool, len(a)+1)
	for i := range can {
		can[i] = make([]bool, len(b)+1)
	}
	can[0][0] = true
	for i := 0; i <= len(a); i++ {
		for j := 0; j <= len(b); j++ {
			if i > 0 && can[i-1][j] && vs[i+j-1] == a[i-1] {
				can[i][j] = true
			}
			if j > 0 && can[i][j-1] && vs[i+j-1] == b[j-1] {
				can[i][j] = true
			}
		}
	}
	return can[len(a)][len(b)]
}
