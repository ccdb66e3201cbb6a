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

// A line continues on the next only when it ends in an odd number of
// backslashes, as in java.util.Properties: one that ends in an escaped
// backslash (a Windows path) ends there, and the property of the next
// line is not swallowed into its value.
func TestAnEscapedBackslashDoesNotContinueTheLine(t *testing.T) {
	m, err := Parse(strings.NewReader(`logging.dir=C:\\logs\\
hystrix.command.default.execution.isolation.thread.timeoutInMilliseconds=2000
b=x\\\
  y
`))
	require.NoError(t, err)
	assert.Equal(t, "2000", m["hystrix.command.default.execution.isolation.thread.timeoutInMilliseconds"])
	assert.Equal(t, `C:\\logs\\`, m["logging.dir"])
	assert.Equal(t, `x\\y`, m["b"])
}

// A line has no bound of length, as in java.util.Properties: a program's
// own long property (a key, a certificate) sharing the file does not make
// the file unreadable.
func TestALongLineIsRead(t *testing.T) {
	long := strings.Repeat("A", 100<<10)
	m, err := Parse(strings.NewReader("jwt.publicKey=" + long + "\nhystrix.threadpool.Users.coreSize=20\n"))
	require.NoError(t, err)
	assert.Equal(t, long, m["jwt.publicKey"])
	assert.Equal(t, "20", m["hystrix.threadpool.Users.coreSize"])
}

// A line that ends in an escaped space ("\ ") does not end in a
// backslash: java.util.Properties reads the next line as a property of
// its own, and so must Parse, lest a Hystrix property after it be
// swallowed into the value before, silently. A line that ends the file
// in a backslash goes on on no line, and the backslash is dropped, as in
// Java.
func TestABackslashBeforeTrailingSpaceDoesNotContinueTheLine(t *testing.T) {
	m, err := Parse(strings.NewReader("server.name=orders\\ \n" +
		"hystrix.command.default.execution.isolation.thread.timeoutInMilliseconds=2000\n" +
		"last=x\\"))
	require.NoError(t, err)
	assert.Equal(t, "2000", m["hystrix.command.default.execution.isolation.thread.timeoutInMilliseconds"])
	assert.Equal(t, "x", m["last"])
}

// A key holds the characters its escapes stand for, as java.util.Properties
// reads them: "\:" and "\=" are a key's colon and equals sign, not its end,
// so that a command keyed by host and port (httpcommand.Host:
// "api.example.com:8443") can be configured from a file, as a Java
// Hystrix service's file would write it.
func TestAKeyHoldsItsEscapedCharacters(t *testing.T) {
	m, err := Parse(strings.NewReader(`hystrix.command.api.example.com\:8443.circuitBreaker.forceOpen=true
a\=b\ c\u0041 = 1
`))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"hystrix.command.api.example.com:8443.circuitBreaker.forceOpen": "true",
		"a=b cA": "1",
	}, m)
}
