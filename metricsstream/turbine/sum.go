package turbine

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// appendSum appends the event of objs, the objects of one type and name
// from different instances, summed as Turbine sums them:
//
//   - a number is the sum of the instances' numbers, settings
//     (propertyValue_*) included, which a dashboard divides by
//     reportingHosts where it needs one host's;
//   - an object of numbers (latency percentiles) is summed member by
//     member;
//   - anything else, a setting included, is the instances' value when
//     they agree, and otherwise an object that counts the instances of
//     each value, as {"false":2,"true":1}: an instance that is a sum
//     itself counts as its reportingHosts, and its own counts by value
//     are added in;
//   - reportingHosts is the sum of the instances' (1 each, unless an
//     instance is a sum itself), and currentTime the latest.
//
// Fields come in the order the instances wrote them.
func appendSum(b []byte, objs []*object) []byte {
	b = appendEventStart(b, objs[0].key)

	var order []string
	values := make(map[string][]value)
	weights := make(map[string][]number) // the reportingHosts of each value's instance
	hosts, currentTime := number{}, int64(0)
	for _, o := range objs {
		for _, f := range o.fields {
			if _, ok := values[f.key]; !ok {
				order = append(order, f.key)
			}
			values[f.key] = append(values[f.key], f.value)
			weights[f.key] = append(weights[f.key], o.reportingHosts)
		}
		hosts = hosts.add(o.reportingHosts)
		currentTime = max(currentTime, o.currentTime)
	}
	if currentTime > 0 {
		b = append(b, `,"currentTime":`...)
		b = strconv.AppendInt(b, currentTime, 10)
	}
	for _, key := range order {
		b = append(b, ',')
		b = appendString(b, key)
		b = append(b, ':')
		b = appendSumOf(b, values[key], weights[key])
	}
	b = append(b, `,"reportingHosts":`...)
	b = hosts.appendJSON(b)
	return append(b, "}\n\n"...)
}

// appendSumOf appends the sum of the values of one field, each of an
// instance of as many hosts as its weight.
func appendSumOf(b []byte, vs []value, weights []number) []byte {
	switch all := allOf(vs); {
	case all == numberKind:
		var sum number
		for _, v := range vs {
			sum = sum.add(v.number)
		}
		return sum.appendJSON(b)
	case all == numbersKind:
		var names []string
		sums := make(map[string]number)
		for _, v := range vs {
			for _, n := range v.numbers {
				if _, ok := sums[n.name]; !ok {
					names = append(names, n.name)
				}
				sums[n.name] = sums[n.name].add(n.number)
			}
		}
		b = append(b, '{')
		for i, name := range names {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, name)
			b = append(b, ':')
			b = sums[name].appendJSON(b)
		}
		return append(b, '}')
	}
	counts := make(map[string]int)
	for _, v := range vs {
		counts[string(v.raw)]++
	}
	if len(counts) == 1 {
		return append(b, vs[0].raw...)
	}
	// An instance that is a sum itself wrote a value its hosts agree on,
	// which counts as many as they are, or its hosts' count by value
	// (an object of numbers), which adds up.
	labels := make(map[string]number, len(counts))
	for i, v := range vs {
		if v.kind == numbersKind {
			for _, n := range v.numbers {
				labels[n.name] = labels[n.name].add(n.number)
			}
			continue
		}
		l := label(string(v.raw))
		labels[l] = labels[l].add(weights[i])
	}
	b = append(b, '{')
	for i, l := range slices.Sorted(maps.Keys(labels)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, l)
		b = append(b, ':')
		b = labels[l].appendJSON(b)
	}
	return append(b, '}')
}

// allOf returns the kind of every value, or otherKind when they differ.
func allOf(vs []value) kind {
	k := vs[0].kind
	for _, v := range vs[1:] {
		if v.kind != k {
			return otherKind
		}
	}
	return k
}

// label is the name under which a value is counted: a string itself,
// anything else its JSON ("true", "1000", "null").
func label(raw string) string {
	var s string
	if strings.HasPrefix(raw, `"`) && json.Unmarshal([]byte(raw), &s) == nil {
		return s
	}
	return raw
}

// appendEventStart appends the start of the event of the objects of k,
// up to its name: `data: {"type":"HystrixCommand","name":"GetUser"`.
func appendEventStart(b []byte, k objectKey) []byte {
	b = append(b, `data: {"type":`...)
	b = appendString(b, k.typ)
	b = append(b, `,"name":`...)
	return appendString(b, k.name)
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}
