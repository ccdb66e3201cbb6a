package observer

import (
	"errors"
	"testing"
)

type recording struct {
	err    error
	panics bool
}

func (r *recording) OnNext(int) {}
func (r *recording) OnError(err error) {
	r.err = err
	if r.panics {
		panic("OnError panicked too")
	}
}
func (r *recording) OnCompleted() {}

// Fail passes the error on, and a panic in OnError does not escape.
func TestFail(t *testing.T) {
	boom := errors.New("boom")
	for _, panics := range []bool{false, true} {
		r := &recording{panics: panics}
		Fail[int](r, boom)
		if r.err != boom {
			t.Errorf("panics=%v: OnError got %v, want %v", panics, r.err, boom)
		}
	}
}
