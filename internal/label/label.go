// Package label escapes the keys of commands, groups, pools and
// collapsers into the label values of Prometheus metrics and the
// attribute values of OpenTelemetry ones, alike for every exporter of the
// module (metricsstream's and fleet's), so that one key is one value.
package label

import (
	"strings"
	"unicode/utf8"
)

// Value returns the label (or attribute) value of a key (of a
// command, group, pool or collapser). Prometheus requires label values to be valid UTF-8, and
// client_golang fails the whole scrape over one that is not, so a key
// that is not valid UTF-8 is escaped: each byte that is not part of a
// valid character is written \xNN, as Go quotes it, and each backslash
// \\. Escaping must keep distinct keys apart, since two metrics with the
// same labels fail the scrape too: so a valid key that contains `\x`, and
// could pass for an escaped one, is escaped as well. Every escaped value
// contains `\x` and decodes back to its key, so no two keys share a
// label value. Any other key is its own label value. The OpenTelemetry
// attributes use the same values, so every exporter names a key alike.
//
// The dashboard stream writes keys as encoding/json does instead, each
// invalid byte as U+FFFD: JSON carries any string, and a dashboard that
// shows two keys alike breaks nothing.
func Value(key string) string {
	if utf8.ValidString(key) && !strings.Contains(key, `\x`) {
		return key
	}
	const hexDigits = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(key) + 8)
	for i := 0; i < len(key); {
		r, size := utf8.DecodeRuneInString(key[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[key[i]>>4])
			b.WriteByte(hexDigits[key[i]&0xF])
		case r == '\\':
			b.WriteString(`\\`)
		default:
			b.WriteString(key[i : i+size])
		}
		i += size
	}
	return b.String()
}
