package command

// valueTeller keeps a stream's terminal event from being told while a
// value is being told: one that comes meanwhile, from another goroutine
// or from the subscriber leaving inside OnNext, is left to the goroutine
// telling the value, which tells it next. Its owner calls its methods
// under the owner's lock, and tells outside it. A subscription and a
// request cache's served subscriber keep one each.
type valueTeller struct {
	telling bool     // a value is being told
	due     *endNote // the terminal event left to the goroutine telling a value
}

// endNote is a terminal event to tell: err, or the completion if nil.
type endNote struct{ err error }

// begin marks a value being told.
func (t *valueTeller) begin() { t.telling = true }

// done marks the value told, and returns the terminal event left to its
// teller, if any.
func (t *valueTeller) done() *endNote {
	due := t.due
	t.telling, t.due = false, nil
	return due
}

// leave leaves the terminal event err to the goroutine telling a value,
// if one is, and reports whether it did: if not, the caller tells it.
func (t *valueTeller) leave(err error) bool {
	if t.telling {
		t.due = &endNote{err: err}
	}
	return t.telling
}
