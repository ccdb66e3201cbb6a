// Package javaprops reads the format of a Java .properties file, as
// Archaius, Spring and Turbine read their configuration: a property a
// line, its name and value apart by "=", ":" or spaces; "#" or "!"
// opening a line of comment; a line that ends in a backslash going on on
// the next (an odd number of them: two are an escaped backslash). It is
// the part of java.util.Properties those files use; the escapes of a
// value (\t, \uXXXX) are not read, since no property of Hystrix or
// Turbine has one.
package javaprops

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strings"
)

// A SyntaxError is a line of a file that Parse does not take.
type SyntaxError struct {
	Line int    // the first line of the property, from 1
	Msg  string // what is wrong with it
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Parse returns the properties of r, each name to its value with the
// spaces around it trimmed. A property given twice is a *SyntaxError
// that names both lines, as is a line without a value; an error reading
// r is returned as it is.
func Parse(r io.Reader) (map[string]string, error) {
	m := map[string]string{}
	lineOf := map[string]int{}
	s := bufio.NewScanner(r)
	s.Buffer(nil, math.MaxInt) // a line is as long as r has it, as in Java
	for n := 1; s.Scan(); n++ {
		line, start := strings.TrimSpace(s.Text()), n
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue // a comment goes on no line, whatever it ends with
		}
		for continues(line) && s.Scan() {
			n++
			line = line[:len(line)-1] + strings.TrimSpace(s.Text())
		}
		i := strings.IndexAny(line, "=: \t")
		if i < 0 {
			return nil, &SyntaxError{start, fmt.Sprintf("%q has no value", line)}
		}
		key, value := line[:i], strings.TrimLeft(line[i:], " \t")
		if value != "" && (value[0] == '=' || value[0] == ':') {
			value = value[1:]
		}
		if first, ok := lineOf[key]; ok {
			return nil, &SyntaxError{start, fmt.Sprintf("%s is set on line %d too", key, first)}
		}
		m[key], lineOf[key] = strings.TrimSpace(value), start
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return m, nil
}

// continues reports whether line goes on on the next: whether it ends in
// an odd number of backslashes, the last not escaped by the one before,
// as java.util.Properties reads it.
func continues(line string) bool {
	n := len(line) - len(strings.TrimRight(line, `\`))
	return n%2 == 1
}
