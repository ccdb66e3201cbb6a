package turbine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// A number is a JSON number of a stream: an integer while it fits,
// else a float.
type number struct {
	i       int64
	f       float64
	isFloat bool
}

func parseNumber(s string) (number, error) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return number{i: i}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return number{}, err
	}
	return number{f: f, isFloat: true}, nil
}

func (n number) float() float64 {
	if n.isFloat {
		return n.f
	}
	return float64(n.i)
}

// add returns n+m: an integer while both are and the sum fits.
func (n number) add(m number) number {
	if !n.isFloat && !m.isFloat {
		if s := n.i + m.i; (s > n.i) == (m.i > 0) {
			return number{i: s}
		}
	}
	return number{f: n.float() + m.float(), isFloat: true}
}

// appendJSON appends n as a JSON number; a sum that overflowed float64
// (an infinity, which JSON has no number for) is null, as metricsstream
// writes such a number.
func (n number) appendJSON(b []byte) []byte {
	if n.isFloat {
		if math.IsInf(n.f, 0) || math.IsNaN(n.f) {
			return append(b, "null"...)
		}
		return strconv.AppendFloat(b, n.f, 'g', -1, 64)
	}
	return strconv.AppendInt(b, n.i, 10)
}

// A kind says how the values of a field add up across instances.
type kind uint8

const (
	otherKind   kind = iota // a string, a boolean, null, an array, or an object not all of numbers
	numberKind              // a number
	numbersKind             // an object of numbers, as latencyExecute's percentiles
)

// A value is the value of one field of an object.
type value struct {
	kind    kind
	raw     []byte        // compact JSON, as the instance wrote it
	number  number        // numberKind
	numbers []namedNumber // numbersKind, in the order they came
}

type namedNumber struct {
	name   string
	number number
}

// A field is one member of an object, in the order it came.
type field struct {
	key   string
	value value
}

// An object is one event of an instance's stream: one command's, pool's
// or collapser's metrics.
type object struct {
	key            objectKey
	fields         []field // without type, name, instanceId, currentTime and reportingHosts
	reportingHosts number  // 1 unless the instance is a sum itself
	currentTime    int64   // Unix milliseconds; 0 if the instance wrote none
	deleted        bool    // deleteData: the instance stopped reporting it
	instance       string  // the URL of the instance that wrote it
	seen           time.Time
}

// An objectKey says which objects of different instances add up.
type objectKey struct{ typ, name string }

var errNotAnObject = errors.New("not a JSON object with a type and a name")

// parseObject parses the data of one event.
func parseObject(data []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errNotAnObject
	}
	o := &object{reportingHosts: number{i: 1}}
	var haveType, haveName bool
	index := make(map[string]int) // of o.fields, by key
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := t.(string) // an object's member names are strings
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		v, err := parseValue(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		switch key {
		case "type": // a string: null would leave typ "" without an error
			haveType = v.raw[0] == '"' && json.Unmarshal(raw, &o.key.typ) == nil
		case "name":
			haveName = v.raw[0] == '"' && json.Unmarshal(raw, &o.key.name) == nil
		case "instanceId":
			// the instance's own, not the sum's
		case "currentTime":
			if v.kind == numberKind {
				o.currentTime = int64(v.number.float())
			}
		case "reportingHosts":
			if v.kind == numberKind {
				o.reportingHosts = v.number
			}
		case "deleteData":
			o.deleted = string(v.raw) == "true" || string(v.raw) == `"true"`
		default:
			// A member written twice is read once, with its last value,
			// as JSON.parse reads it: not summed with itself.
			if i, ok := index[key]; ok {
				o.fields[i].value = v
				continue
			}
			index[key] = len(o.fields)
			o.fields = append(o.fields, field{key, v})
		}
	}
	if _, err := dec.Token(); err != nil || !haveType || !haveName || dec.More() {
		return nil, errNotAnObject
	}
	return o, nil
}

func parseValue(raw []byte) (value, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return value{}, err
	}
	v := value{raw: compact.Bytes()}
	switch c := v.raw[0]; {
	case c == '-' || '0' <= c && c <= '9':
		n, err := parseNumber(string(v.raw))
		if err != nil {
			return value{}, err
		}
		v.kind, v.number = numberKind, n
	case c == '{':
		if ns, ok := parseNumbers(v.raw); ok {
			v.kind, v.numbers = numbersKind, ns
		}
	}
	return v, nil
}

// parseNumbers parses an object whose members are all numbers, keeping
// their order; ok is false for any other object.
func parseNumbers(raw []byte) (ns []namedNumber, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	index := make(map[string]int) // of ns, by name
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, false
		}
		v, err := dec.Token()
		num, isNumber := v.(json.Number)
		if err != nil || !isNumber {
			return nil, false
		}
		n, err := parseNumber(string(num))
		if err != nil {
			return nil, false
		}
		name := k.(string)
		if i, ok := index[name]; ok {
			ns[i].number = n // written twice: the last, as JSON.parse reads it
			continue
		}
		index[name] = len(ns)
		ns = append(ns, namedNumber{name, n})
	}
	return ns, true
}
