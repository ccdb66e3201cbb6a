package hystrixprops

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/rxhystrix/rxhystrix/internal/javaprops"
)

// ErrBadProperty is in the error of a Hystrix property that Parse or
// FromMap does not take: one it does not know, or a value it cannot
// read.
var ErrBadProperty = errors.New("hystrixprops: bad property")

// Properties are Hystrix's properties of commands and pools, checked. The
// zero Properties sets none. A Properties is not changed after it is made,
// and is safe for concurrent use.
type Properties struct {
	// command, collapser and pool hold the values by key ("default"
	// for the default level) and name of the property.
	command, collapser, pool map[string]map[string]string
	ignored                  []string
}

// FromMap returns the Hystrix properties among m, a property's full name
// to its value (surrounding spaces are trimmed): those that start with
// "hystrix.". Any of those that names no property of Hystrix's, or whose
// value cannot be read, is an error that is ErrBadProperty and names it.
func FromMap(m map[string]string) (*Properties, error) {
	p := &Properties{command: map[string]map[string]string{}, collapser: map[string]map[string]string{},
		pool: map[string]map[string]string{}}
	for _, full := range slices.Sorted(maps.Keys(m)) {
		if err := p.add(full, strings.TrimSpace(m[full])); err != nil {
			return nil, fmt.Errorf("%w %s: %v", ErrBadProperty, full, err)
		}
	}
	slices.Sort(p.ignored)
	return p, nil
}

// add adds one property, by its full name.
func (p *Properties) add(full, value string) error {
	var (
		rest   string
		known  map[string]property
		values map[string]map[string]string
	)
	switch {
	case strings.HasPrefix(full, collapserPrefix):
		rest, known, values = full[len(collapserPrefix):], collapserProperties, p.collapser
	case strings.HasPrefix(full, commandPrefix):
		rest, known, values = full[len(commandPrefix):], commandProperties, p.command
	case strings.HasPrefix(full, poolPrefix):
		rest, known, values = full[len(poolPrefix):], poolProperties, p.pool
	case strings.HasPrefix(full, pluginPrefix) && strings.HasSuffix(full, ".implementation") && len(full) > len(pluginPrefix)+len(".implementation"):
		p.ignored = append(p.ignored, full+": "+pluginIgnored)
		return nil
	case strings.HasPrefix(full, "hystrix."):
		global, ok := globalProperties[full]
		if !ok {
			return errors.New("not a property of a command, a collapser or a pool, nor one of Hystrix's others")
		}
		if err := check(global.kind, value); err != nil {
			return err
		}
		p.ignored = append(p.ignored, full+": "+global.ignored)
		return nil
	default:
		return nil // the program's own
	}
	key, name, ok := split(rest, known)
	switch {
	case !ok:
		return errors.New("no such property")
	case known[name].instanceOnly && key == defaultKey:
		return errors.New("has no default, only a command's own")
	}
	if err := check(known[name].kind, value); err != nil {
		return err
	}
	if why := known[name].ignored; why != "" {
		p.ignored = append(p.ignored, full+": "+why)
	}
	if values[key] == nil {
		values[key] = map[string]string{}
	}
	values[key][name] = value
	return nil
}

// Parse reads properties in the format of a Java .properties file
// (Archaius's, Spring's application.properties): a property a line, its
// name and value apart by "=", ":" or spaces; "#" or "!" opening a line
// of comment; a line that ends in a backslash going on on the next. The
// Hystrix properties among them are taken as FromMap takes them. A
// property given twice is an error that names both lines, as is a line
// without a value.
func Parse(r io.Reader) (*Properties, error) {
	m, err := javaprops.Parse(r)
	var syntax *javaprops.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return nil, fmt.Errorf("%w: %w", ErrBadProperty, err)
	case err != nil:
		return nil, fmt.Errorf("hystrixprops: Parse: %w", err)
	}
	return FromMap(m)
}

// Ignored names the properties given that have no effect in rxhystrix,
// each with why, in order of their names.
func (p *Properties) Ignored() []string { return slices.Clone(p.ignored) }
