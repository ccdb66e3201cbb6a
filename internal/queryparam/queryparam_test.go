package queryparam

import "testing"

func TestFirst(t *testing.T) {
	for _, tc := range []struct {
		query, value string
		ok, err      bool
	}{
		{"", "", false, false},
		{"x=1", "", false, false},
		{"delay=5", "5", true, false},
		{"delay=5&delay=7", "5", true, false},
		{"bad%zz=1&delay=5", "5", true, false},
		{"delay=&delay=5", "", true, false},
		{"delay", "", true, false},
		{"d%65lay=a%20b", "a b", true, false},
		{"x=1&delay=5%2&y=2", "", true, true},
		{"delay=5;x=1", "5;x=1", true, false},
	} {
		value, ok, err := First(tc.query, "delay")
		if value != tc.value || ok != tc.ok || (err != nil) != tc.err {
			t.Errorf("First(%q) = %q, %v, %v; want %q, %v, error %v", tc.query, value, ok, err, tc.value, tc.ok, tc.err)
		}
	}
}
