// Package faultmark writes a request's mark for fault injection
// (command.WithFaultInjection) as the text that carries it between
// services, in an HTTP header or gRPC metadata, and reads it back: "*"
// for every key, else the keys, each escaped as a URL path segment
// (url.PathEscape), separated by commas.
package faultmark

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/rxhystrix/rxhystrix/command"
)

// Value returns the text of ctx's mark, and false when ctx is not
// marked.
func Value(ctx context.Context) (string, bool) {
	keys, marked := command.FaultInjectionOf(ctx)
	if !marked {
		return "", false
	}
	if len(keys) == 0 {
		return "*", true
	}
	escaped := make([]string, len(keys))
	for i, k := range keys {
		escaped[i] = url.PathEscape(k) // escapes * too: a key "*" is not every key
	}
	return strings.Join(escaped, ","), true
}

// Mark returns ctx marked as the texts values say together, ctx itself
// when there are none, or an error that quotes the part that is neither
// "*" nor an escaped command key. Spaces around a part are ignored.
func Mark(ctx context.Context, values []string) (context.Context, error) {
	if len(values) == 0 {
		return ctx, nil
	}
	var keys []string
	every := false // a part is *: every key, once every part is checked
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			part = strings.TrimSpace(part)
			if part == "*" {
				every = true
				continue
			}
			key, err := url.PathUnescape(part)
			if err != nil || !command.ValidKey(key) {
				return nil, fmt.Errorf("%q is not a command key escaped as a URL path segment, nor *", part)
			}
			keys = append(keys, key)
		}
	}
	if every {
		return command.WithFaultInjection(ctx), nil
	}
	return command.WithFaultInjection(ctx, keys...), nil
}
