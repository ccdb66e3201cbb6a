// Package javaprops reads the format of a Java .properties file, as
// Archaius, Spring and Turbine read their configuration: a property a
// line, its name and value apart by "=", ":" or spaces; "#" or "!"
// opening a line of comment; a line that ends in a backslash going on on
// the next (an odd number of them: two are an escaped backslash); a line
// ending at "\n", "\r\n" or "\r". It is the part of java.util.Properties
// those files use: the escapes of a name and of a value are read ("\:",
// "\=", "\ ", \t, \uXXXX), so that a name may hold a separator (a
// command keyed "api.example.com:8443"), and a value is what Java reads
// (Properties.store escapes a value's ":" and "=" too). A byte order mark
// that begins the file is not part of its first name.
package javaprops

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
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
	s.Split(scanLines)
	for n := 1; s.Scan(); n++ {
		// Only the spaces that begin a line are skipped before it is
		// read: those that end it are part of it, so that a line ending
		// in an escaped space ("\ ") does not end in a backslash.
		text := s.Text()
		if n == 1 {
			text = strings.TrimPrefix(text, "\ufeff")
		}
		raw, start := strings.TrimLeft(text, " \t\f"), n
		if raw == "" || raw[0] == '#' || raw[0] == '!' {
			continue // a comment goes on no line, whatever it ends with
		}
		line := raw
		for continues(raw) {
			line = line[:len(line)-1] // at the end of the file too, as in Java
			if !s.Scan() {
				break
			}
			n++
			raw = strings.TrimLeft(s.Text(), " \t\f")
			line += raw
		}
		// Java's spaces only (" ", \t, \f): a key that begins with another
		// (U+00A0, U+0085, \v) holds it, as in Java.
		line = strings.TrimRight(line, " \t\f")
		if line == "" {
			// A lone backslash continued onto a blank line: Java
			// passes over the empty line it makes.
			continue
		}
		i := keyEnd(line)
		if i < 0 {
			return nil, &SyntaxError{start, fmt.Sprintf("%q has no value", line)}
		}
		key, err := unescape(line[:i])
		if err != nil {
			return nil, &SyntaxError{start, fmt.Sprintf("%q: %v", line[:i], err)}
		}
		value := strings.TrimLeft(line[i:], " \t\f")
		if value != "" && (value[0] == '=' || value[0] == ':') {
			value = value[1:]
		}
		if value, err = unescape(value); err != nil {
			return nil, &SyntaxError{start, fmt.Sprintf("the value of %s: %v", key, err)}
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

// keyEnd returns the index of the first separator of line ("=", ":", a
// space) that no backslash escapes, or -1 if there is none.
func keyEnd(line string) int {
	escaped := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case strings.IndexByte("=: \t\f", c) >= 0:
			return i
		}
	}
	return -1
}

// unescape reads the escapes of a key or a value as java.util.Properties
// does: \t, \n, \r, \f, \uXXXX, and a backslash before any other
// character that character ("\:", "\=", "\ "). A backslash that ends it
// escaped a space that the line's trimming took away, and is dropped.
func unescape(text string) (string, error) {
	if !strings.Contains(text, `\`) {
		return text, nil
	}
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+1 == len(text) {
			break
		}
		i++
		switch c = text[i]; c {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			r, ok := hex4(text, i+1)
			if !ok {
				return "", fmt.Errorf("a malformed \\uXXXX escape")
			}
			i += 4
			// A character beyond the BMP is a UTF-16 surrogate pair of
			// escapes, as Java writes it: one character.
			if utf16.IsSurrogate(r) && strings.HasPrefix(text[i+1:], `\u`) {
				if r2, ok := hex4(text, i+3); ok {
					if c := utf16.DecodeRune(r, r2); c != utf8.RuneError {
						r = c
						i += 6
					}
				}
			}
			b.WriteRune(r)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// hex4 reads the four hexadecimal digits of a \uXXXX escape at text[i:].
func hex4(text string, i int) (rune, bool) {
	if i+4 > len(text) {
		return 0, false
	}
	r, err := strconv.ParseUint(text[i:i+4], 16, 16)
	return rune(r), err == nil
}

// scanLines is bufio.ScanLines for the line ends of java.util.Properties:
// "\n", "\r\n", and "\r" alone.
func scanLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	switch i := bytes.IndexAny(data, "\r\n"); {
	case i < 0:
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data):
		if data[i+1] == '\n' {
			return i + 2, data[:i], nil
		}
		return i + 1, data[:i], nil
	case atEOF:
		return i + 1, data[:i], nil
	}
	return 0, nil, nil // a "\n" may follow the "\r"
}
