package keyedcommand

import (
	"context"

	"github.com/rxhystrix/rxhystrix/command"
)

// LogText returns the request log of ctx's request context
// (command.RequestLog.String) as a transport sends it in a header or a
// trailer: "" if it logged nothing. The value is printable ASCII: the log
// itself when it is, and otherwise the log with each byte outside
// ' '..'~', and each '%', percent-encoded ("%0A"), as gRPC encodes a
// status message; url.PathUnescape gives the log back.
//
// A command key is any UTF-8, and a value that is not printable ASCII
// breaks the response it goes with: HTTP/2 drops a header or trailer with
// a control character (and gRPC then fails the call with Internal), and
// Go's HTTP/1.1 client refuses the whole response.
func LogText(ctx context.Context) string {
	return printableASCII(command.RequestLogFrom(ctx).String())
}

// printableASCII returns s with each byte outside ' '..'~', and each '%',
// percent-encoded.
func printableASCII(s string) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		clean = printable(s[i])
	}
	if clean {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+16)
	for i := 0; i < len(s); i++ {
		if c := s[i]; printable(c) {
			b = append(b, c)
		} else {
			b = append(b, '%', hex[c>>4], hex[c&15])
		}
	}
	return string(b)
}

// printable reports whether c goes unencoded.
func printable(c byte) bool { return ' ' <= c && c <= '~' && c != '%' }
