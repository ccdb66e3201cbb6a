package metricsstream

// A Completion's events are added to the rolling buckets a word at a time:
// counters are packed two to a word (see counterRing), events 2w and 2w+1
// in word w, the same layout as two neighbouring int32 entries of
// EventCounts. A word of a well-formed EventCounts (present events 1, the
// emission counts non-negative, ExceptionThrown unused) is its own pending
// add; eventWords says how to tell, and how a word counts in health.
type eventWord struct {
	// malformed has the bits that, set, make the word need normalising:
	// all but the lowest of an event that happens at most once, the sign
	// of an emission count, and all of ExceptionThrown.
	malformed uint64
	// total and errors have the lowest bit of each event that counts in
	// HealthCounts.Total and HealthCounts.Errors (events that happen at
	// most once, so their normalised entries are 0 or 1).
	total, errors uint64
}

var eventWords = func() (w [rollingWords]eventWord) {
	for e := range NumEventTypes {
		word, shift := sumWord(int(e))
		switch {
		case e == ExceptionThrown:
			w[word].malformed |= 0xffffffff << shift
		case e.isMultiple():
			w[word].malformed |= 1 << 31 << shift
		default:
			w[word].malformed |= 0xfffffffe << shift
		}
		if e.CountsInHealth() {
			w[word].total |= 1 << shift
		}
		if e.IsHealthError() {
			w[word].errors |= 1 << shift
		}
	}
	return w
}()

// eventWordsOf sets adds to the pending adds of events (see addTo),
// normalised as Hystrix counts them: an event that happens at most once
// counts once when its entry is positive, an emission count counts what it
// says when positive, ExceptionThrown counts nothing (it is derived). It
// returns the words that are not zero (see counterRing.add) and what they
// count in health.
func eventWordsOf(events *EventCounts, adds *[rollingWords]uint64) (words uint32, total, errors int64) {
	for w := range int(NumEventTypes) / 2 {
		v := uint64(uint32(events[2*w])) | uint64(uint32(events[2*w+1]))<<32
		if v == 0 {
			continue
		}
		if v&eventWords[w].malformed != 0 {
			v = normalisedWord(events, w)
		}
		adds[w] = v
		words |= 1 << w
		total += halvesSet(v & eventWords[w].total)
		errors += halvesSet(v & eventWords[w].errors)
	}
	if NumEventTypes%2 == 1 {
		const w = rollingWords - 1
		adds[w] = normalisedWord(events, w)
		if adds[w] != 0 {
			words |= 1 << w
		}
		total += halvesSet(adds[w] & eventWords[w].total)
		errors += halvesSet(adds[w] & eventWords[w].errors)
	}
	return words, total, errors
}

// halvesSet counts the halves of v whose lowest bit is set, v having no
// other bits set: a normalised word masked with eventWord.total or errors.
func halvesSet(v uint64) int64 { return int64(v&1 + v>>32) }

// normalisedWord returns the pending add of events 2w and 2w+1 of an
// EventCounts that needs normalising.
func normalisedWord(events *EventCounts, w int) uint64 {
	var v uint64
	for j := 2 * w; j < min(2*w+2, len(events)); j++ {
		n := events[j]
		e := EventType(j)
		if n <= 0 || e == ExceptionThrown {
			continue
		}
		if !e.isMultiple() {
			n = 1
		}
		v += uint64(n) << (uint(j-2*w) * 32)
	}
	return v
}

// successWords is eventWordsOf for the events of a plain success, by far
// the most common: MarkCompletion takes it without the pass over every
// word when the events are exactly those.
var successWords = func() (w struct {
	events        EventCounts
	adds          [rollingWords]uint64
	words         uint32
	total, errors int64
}) {
	w.events[Success] = 1
	w.words, w.total, w.errors = eventWordsOf(&w.events, &w.adds)
	return w
}()
