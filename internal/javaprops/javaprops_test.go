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
	assert.Equal(t, `C:\logs\`, m["logging.dir"], "as Java reads it")
	assert.Equal(t, `x\y`, m["b"])
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

// A value's escapes are read as java.util.Properties reads them, as a
// name's are: Properties.store writes a value's colon, equals sign, "#"
// and "!" escaped ("api.example.com\:8443"), and a program reading the
// file must get the value Java gets, not one with a backslash in it.
func TestAValueHoldsItsEscapedCharacters(t *testing.T) {
	m, err := Parse(strings.NewReader(`pool=api.example.com\:8443
suffix=\:8080/hystrix.stream
u=\u0055sers\ttab
`))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"pool":   "api.example.com:8443",
		"suffix": ":8080/hystrix.stream",
		"u":      "Users\ttab",
	}, m)
	_, err = Parse(strings.NewReader("bad=\\u00zz\n"))
	var syntax *SyntaxError
	assert.ErrorAs(t, err, &syntax, "a malformed \\uXXXX in a value, as Java refuses it")
}

// A line ends at "\r" too, alone or before "\n", as java.util.Properties
// ends it: a file saved with classic Mac line ends must not have every
// property after its first swallowed into the first one's value.
func TestACarriageReturnEndsALine(t *testing.T) {
	m, err := Parse(strings.NewReader("a=1\rhystrix.threadpool.Users.coreSize=20\r\nb=x,\\\r  y\rc=3"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "1", "hystrix.threadpool.Users.coreSize": "20", "b": "x,y", "c": "3"}, m)
}

// A byte order mark that begins the file (as Windows editors save UTF-8)
// is not part of the first property's name: a Hystrix property on the
// first line would otherwise not start with "hystrix." and be passed over
// silently, however it is spelt.
func TestAByteOrderMarkIsNotPartOfTheFirstName(t *testing.T) {
	m, err := Parse(strings.NewReader("\ufeffhystrix.threadpool.Users.coreSize=20\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"hystrix.threadpool.Users.coreSize": "20"}, m)
}

// A character beyond the Basic Multilingual Plane is escaped as a UTF-16
// surrogate pair, two \uXXXX (as native2ascii and Properties.store write
// it): java.util.Properties reads the pair as the one character.
func TestASurrogatePairIsOneCharacter(t *testing.T) {
	m, err := Parse(strings.NewReader(`greeting=hi \uD83D\uDE00
k\uD834\uDD1E=1
`))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"greeting": "hi 😀", "k𝄞": "1"}, m)
}

// Only Java's spaces (" ", \t, \f) begin a line without being part of
// it: java.util.Properties keeps a no-break space, a NEL or a vertical
// tab that begins a key, so that "\u00a0a=1" and "a=2" are two
// properties, not one given twice, and a Hystrix property pasted with a
// no-break space before it is not Hystrix's, as in Java.
func TestAKeyKeepsTheUnicodeSpacesThatBeginIt(t *testing.T) {
	m, err := Parse(strings.NewReader("\u00a0a=1\na=2\n\u0085b=3\n\vc 4\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"\u00a0a": "1", "a": "2", "\u0085b": "3", "\vc": "4"}, m)
}

// A line that is only a backslash, before a blank line, continues onto
// nothing: the property it makes is empty, and java.util.Properties
// passes over it as over a blank line, so the file is read, not refused
// as a line without a value.
func TestALoneBackslashBeforeABlankLineIsABlankLine(t *testing.T) {
	m, err := Parse(strings.NewReader("a=1\n  \\\n\nhystrix.threadpool.Users.coreSize=20\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a": "1", "hystrix.threadpool.Users.coreSize": "20"}, m)
}
