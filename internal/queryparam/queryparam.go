// Package queryparam reads one parameter of a URL's query the way a
// servlet's getParameter does, for the handlers whose parameters the
// Hystrix dashboard and Turbine send.
package queryparam

import (
	"fmt"
	"net/url"
	"strings"
)

// First returns the value of the first parameter of rawQuery named name,
// and whether there is one. Other parameters are not read, even
// malformed ones (a dashboard passes its own on). A value whose escapes
// do not read is an error naming the parameter: url.ParseQuery would drop
// it, and with it any pair holding a semicolon, and the request would be
// served as if it had not asked.
func First(rawQuery, name string) (value string, ok bool, err error) {
	for rawQuery != "" {
		var pair string
		pair, rawQuery, _ = strings.Cut(rawQuery, "&")
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		if key, err := url.QueryUnescape(rawKey); err != nil || key != name {
			continue
		}
		value, err := url.QueryUnescape(rawValue)
		if err != nil {
			return "", true, fmt.Errorf("query parameter %s: malformed escape in %q", name, rawValue)
		}
		return value, true, nil
	}
	return "", false, nil
}
