package command

import (
	"testing"
	"unsafe"
)

// A subscription, every execution of Queue, Observe, ToObservable and an
// ObservableCommand, is one allocation: with the allocator's header of 8
// bytes (objects over 512 bytes that hold pointers carry one) it must fit
// the size class of 640 bytes, or each costs 64 more (command
// BenchmarkObservableCommand/plain/ToSlice: 920 B/op, not 984). A field
// added to the subscription or its execution pays for itself elsewhere,
// in padding (see execution's fields) or by a field less.
func TestSubscriptionFitsItsSizeClass(t *testing.T) {
	const sizeClass, header = 640, 8
	if n := unsafe.Sizeof(subscription[int, int]{}); n+header > sizeClass {
		t.Fatalf("a subscription is %d bytes: with its header of %d it is past the size class of %d", n, header, sizeClass)
	}
}
