package javaprops

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The separators, comments and continued lines of a .properties file,
// with the spaces around each value trimmed.
func TestParse(t *testing.T) {
	m, err := Parse(strings.NewReader(`# a comment
! another, which ends in a backslash \
a=1
b : 2
c 3
d=
e = a, \
    b,\
    c
  f=x=y
`))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "1", "b": "2", "c": "3", "d": "", "e": "a, b,c", "f": "x=y"}, m)
}

// A line without a value, and a property given twice, are errors that
// name their lines; an error reading is returned as it is.
func TestParseRefuses(t *testing.T) {
	for in, want := range map[string]string{
		"a=1\n\nalone\n":       `line 3: "alone" has no value`,
		"a=1\nb=2\\\n3\na=4\n": "line 4: a is set on line 1 too",
	} {
		_, err := Parse(strings.NewReader(in))
		var syntax *SyntaxError
		require.ErrorAs(t, err, &syntax, in)
		assert.EqualError(t, err, want)
	}
	broken := errors.New("disk on fire")
	_, err := Parse(iotest.ErrReader(broken))
	assert.Same(t, broken, err)
}
