package peers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rxhystrix/rxhystrix/command"
)

// answer is the value passing work returns.
const answer = 42

// errFailure is the error failing work returns.
var errFailure = errors.New("peers: work failed")

// errWrongValue stands for a nil error that came with a value other than
// the one the work returned.
var errWrongValue = errors.New("peers: wrong value")

// work is what a row protects: a function that passes or fails at once.
type work func(ctx context.Context) (int, error)

func passes(context.Context) (int, error) { return answer, nil }
func fails(context.Context) (int, error)  { return 0, errFailure }

// errOnly adapts w for implementations whose work returns only an error.
func errOnly(w work) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := w(ctx)
		return err
	}
}

// inRequest calls f under a context of its own that can be cancelled and
// is cancelled after, as a server's request context is, so that a row
// shows what a cancellable caller's context costs an implementation; the
// context's own making costs every such row the same.
func inRequest(f func(context.Context) error) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	return f(ctx)
}

// checkValue turns a value other than answer into errWrongValue.
func checkValue(v int, err error) error {
	if err == nil && v != answer {
		return errWrongValue
	}
	return err
}

// row is one implementation in the matrix.
type row struct {
	name string
	// failingOnly marks a row that only makes sense with failing work,
	// passingOnly one that measures the passing path alone (a retry
	// policy's rows, whose failing calls would wait out backoffs).
	failingOnly, passingOnly bool
	// prepare builds a fresh instance for one run by callers concurrent
	// callers and returns the call they make. It may register cleanups
	// with b.Cleanup.
	prepare func(b testing.TB, callers int, w work) (call func() error)
	// shortCircuited reports whether err is the row's short-circuit
	// error; nil means the row never short-circuits.
	shortCircuited func(err error) bool
}

// ourRows holds the rxhystrix rows; rxhystrix_test.go fills it.
var ourRows []row

// peerRows returns the floor and the peers, in table order.
func peerRows() []row {
	return []row{
		directRow(),
		handOffRow(),
		goRow(),
		cep21MinimalRow(),
		cep21HystrixRow(),
		cep21GoRow(),
		cep21GoTimeoutRow(),
		cep21HystrixRequestRow(),
		cep21GoTimeoutRequestRow(),
		hystrixGoRow(),
		gobreakerRow(),
		failsafeRow(),
		failsafeTimeoutRow(),
		failsafeRetryRow(),
		failsafeHedgeRow(),
		failsafeRateLimitRow(),
	}
}

// callerCounts are the concurrency levels of cep21's matrix.
var callerCounts = []int{1, 75}

func BenchmarkCircuits(b *testing.B) {
	rows := append(peerRows(), ourRows...)
	for _, mode := range []struct {
		name string
		w    work
		pass bool
	}{
		{"passing", passes, true},
		{"failing", fails, false},
	} {
		b.Run(mode.name, func(b *testing.B) {
			for _, callers := range callerCounts {
				b.Run(fmt.Sprintf("c=%d", callers), func(b *testing.B) {
					for _, r := range rows {
						if r.failingOnly && mode.pass || r.passingOnly && !mode.pass {
							continue
						}
						b.Run(r.name, func(b *testing.B) {
							call := r.prepare(b, callers, mode.w)
							measure(b, callers, mode.pass, call, r.shortCircuited)
						})
					}
				})
			}
		})
	}
}

// verdict classifies the error of one call.
type verdict int

const (
	right verdict = iota
	rightShorted
	late // passing work that timed out (see lateTolerance)
	wrong
)

// lateTolerance is the share of a passing row's calls that may end in a
// timeout. 75 callers that never block, on two processors, are preempted
// and wait their turn, and one now and then waits past a 1 s timeout
// (one call in a few million in rxhystrix-semaphore-timeout with 75
// callers; a loop of 75 goroutines with no circuit in it waits as long).
// Those are counted as late/op, not failed; a timeout that comes before
// its time is a defect that the command package's tests catch on the
// manual clock, and more than one late call in a hundred thousand fails
// the row.
const lateTolerance = 1e-5

// judge tells whether err is a right answer for passing or failing work.
func judge(pass bool, err error, shortCircuited func(error) bool) verdict {
	if pass {
		switch {
		case err == nil:
			return right
		case errors.Is(err, command.ErrTimeout):
			return late
		}
		return wrong
	}
	switch {
	case err == nil:
		return wrong
	case shortCircuited != nil && shortCircuited(err):
		return rightShorted
	case errors.Is(err, errFailure):
		return right
	}
	return wrong
}

// share returns how many of n calls caller i of callers makes: n is split
// exactly, the first n%callers callers making one more.
func share(n, callers, i int) int {
	s := n / callers
	if i < n%callers {
		s++
	}
	return s
}

// runCallers runs b.N calls split across callers goroutines, which are
// started before the timer and released together: caller i makes its n
// calls (see share) in body(i, n).
func runCallers(b *testing.B, callers int, body func(i, n int)) {
	var done sync.WaitGroup
	start := make(chan struct{})
	for i := range callers {
		n := share(b.N, callers, i)
		done.Add(1)
		go func() {
			defer done.Done()
			<-start
			body(i, n)
		}()
	}
	b.ReportAllocs()
	b.ResetTimer()
	close(start)
	done.Wait()
	b.StopTimer()
}

// tally counts calls by their verdict, made by any number of callers.
type tally struct {
	wrongs, shorted, lates atomic.Int64
	firstWrong             error
	once                   sync.Once
}

// callN makes n calls of call, for passing work if pass is set, and
// counts their verdicts.
func (t *tally) callN(n int, pass bool, call func() error, shortCircuited func(error) bool) {
	var w, s, l int64
	for range n {
		err := call()
		switch judge(pass, err, shortCircuited) {
		case rightShorted:
			s++
		case late:
			l++
		case wrong:
			if w == 0 {
				t.once.Do(func() { t.firstWrong = err })
			}
			w++
		}
	}
	t.wrongs.Add(w)
	t.shorted.Add(s)
	t.lates.Add(l)
}

// check fails b if any of the n calls counted gave a wrong result, or
// more passing calls than lateTolerance allows timed out.
func (t *tally) check(b *testing.B, n int, pass bool) {
	if w := t.wrongs.Load(); w > 0 {
		b.Fatalf("%d of %d calls gave a wrong result; first: %v", w, n, t.firstWrong)
	}
	if l := t.lates.Load(); pass && float64(l) > lateTolerance*float64(n) {
		b.Fatalf("%d of %d passing calls timed out", l, n)
	}
}

// measure times b.N calls of call split across callers goroutines (see
// runCallers). It fails b if any call's result is wrong, and for failing
// work reports the fraction of short-circuited calls as shorted/op.
func measure(b *testing.B, callers int, pass bool, call func() error, shortCircuited func(error) bool) {
	var t tally
	runCallers(b, callers, func(_, n int) { t.callN(n, pass, call, shortCircuited) })
	t.check(b, b.N, pass)
	if pass {
		// Reported in every round, so that a table's median counts the
		// rounds with none.
		b.ReportMetric(float64(t.lates.Load())/float64(b.N), "late/op")
	} else {
		b.ReportMetric(float64(t.shorted.Load())/float64(b.N), "shorted/op")
	}
}
