package label

import (
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValue(t *testing.T) {
	cases := []struct{ key, want string }{
		{"GetUser", "GetUser"},
		{"", ""},
		{"snow ☃ and 😀", "snow ☃ and 😀"},
		{`C:\path`, `C:\path`},
		{"bad-\xff", `bad-\xff`},
		{"bad-\xfe", `bad-\xfe`},
		{"\xe2\x82 cut short", `\xe2\x82 cut short`},
		{"\xed\xa0\x80", `\xed\xa0\x80`}, // a surrogate is not UTF-8
		{"back\\slash \xff", `back\\slash \xff`},
		{`bad-\xff`, `bad-\\xff`}, // valid, but would pass for the escaped "bad-\xff"
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Value(c.key), "%q", c.key)
	}
}

// unescapeLabel undoes Value's escaping.
func unescapeLabel(t *testing.T, v string) string {
	var b []byte
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' {
			b = append(b, v[i])
			continue
		}
		require.Less(t, i+1, len(v), "a lone backslash ends %q", v)
		if v[i+1] == '\\' {
			b = append(b, '\\')
			i++
			continue
		}
		require.Equal(t, byte('x'), v[i+1], "an unknown escape in %q", v)
		require.LessOrEqual(t, i+4, len(v), "a short \\x escape in %q", v)
		n, err := strconv.ParseUint(v[i+2:i+4], 16, 8)
		require.NoError(t, err)
		b = append(b, byte(n))
		i += 3
	}
	return string(b)
}

// Every label value is valid UTF-8, and tells its key: no two keys share
// one. A key left as it is has no \x in it; every escaped one has.
func FuzzValue(f *testing.F) {
	for _, s := range []string{"", "a", "\xff", `\xff`, `\`, `\\`, "\\\xff", "é", "\xed\xa0\x80", `a\x`, "\xe2\x82"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		v := Value(key)
		require.True(t, utf8.ValidString(v), "%q gave %q", key, v)
		if v == key {
			require.NotContains(t, v, `\x`)
			return
		}
		require.Contains(t, v, `\x`, "%q gave %q", key, v)
		require.Equal(t, key, unescapeLabel(t, v), "%q gave %q", key, v)
	})
}
