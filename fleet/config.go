package fleet

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrInvalidConfig is wrapped by the error [Config.Validate] returns; the
// message names the offending field.
var ErrInvalidConfig = errors.New("fleet: invalid config")

// The defaults of [Config].
const (
	DefaultPrefix  = "rxhystrix:fleet:"
	DefaultTimeout = 100 * time.Millisecond
)

// Config says which Redis the instances of a fleet share, who this
// instance is, and which command keys judge on the fleet's health.
type Config struct {
	// Client is the Redis every instance of the fleet uses. Required. It
	// must respect context deadlines (go-redis's ContextTimeoutEnabled,
	// and no ReadTimeout or WriteTimeout of -2, which turns deadlines
	// off), so that Timeout bounds each exchange; New checks it for the
	// clients of package redis. Few retries (MaxRetries -1 for none)
	// suit it: an exchange that fails is simply made again at the next
	// interval.
	Client redis.UniversalClient
	// Instance names this instance, uniquely in the fleet: a host name
	// and process id, say. Required. It holds no '}': the name of the
	// instance's mark ends with it, and with one the mark of a key could
	// be named as a bucket or mark of another key that holds '}'.
	Instance string
	// Keys are the command keys whose breakers trip on the fleet's
	// health. Every other key keeps its own metrics. None begins with
	// '}', which would close the hash tag around it empty (see Prefix).
	Keys []string
	// Prefix begins every Redis key the fleet writes. "" means
	// DefaultPrefix. Services that share a Redis and have command keys
	// in common need a prefix each: the keys name the command, not the
	// service. It holds no brace: the braces around the command key make
	// a key's buckets one Redis Cluster hash slot, and a brace before
	// them would take their place ("x{}" would spread the buckets over
	// every slot, and a script's keys must share one).
	Prefix string
	// Timeout bounds each exchange with Redis, in real time whatever the
	// registry's clock: past it, the exchange counts as failed and the
	// breaker judges on this instance's health alone until the next one
	// succeeds. 0 means DefaultTimeout. Keep it well under the health
	// snapshot interval: an exchange never lasts longer than the
	// command's interval, whatever Timeout says, since the breaker's
	// next snapshot waits for it.
	Timeout time.Duration
}

// Validate reports the first field of c that is missing or wrong, in an
// error that names it and wraps [ErrInvalidConfig].
func (c Config) Validate() error {
	switch {
	case isNil(c.Client):
		return invalid("Client", "is nil")
	case !respectsDeadlines(c.Client):
		return invalid("Client", "does not respect context deadlines: set ContextTimeoutEnabled, and no ReadTimeout or WriteTimeout of -2")
	case c.Instance == "":
		return invalid("Instance", "is empty")
	case strings.Contains(c.Instance, "}"):
		return invalid("Instance", fmt.Sprintf("%q holds '}', which could name its mark as another key's bucket", c.Instance))
	case c.Timeout < 0:
		return invalid("Timeout", fmt.Sprintf("(%v) is negative", c.Timeout))
	case strings.ContainsAny(c.Prefix, "{}"):
		return invalid("Prefix", fmt.Sprintf("%q holds a brace, which would take the place of the hash tag around the command key", c.Prefix))
	}
	for i, k := range c.Keys {
		switch {
		case k == "":
			return invalid(fmt.Sprintf("Keys[%d]", i), "is empty")
		case k[0] == '}':
			return invalid(fmt.Sprintf("Keys[%d]", i), fmt.Sprintf("%q begins with '}', which would leave the hash tag around it empty", k))
		}
	}
	return nil
}

func invalid(field, problem string) error {
	return fmt.Errorf("%w: Config.%s %s", ErrInvalidConfig, field, problem)
}

// isNil reports whether c is nil, or a nil client of package redis.
func isNil(c redis.UniversalClient) bool {
	switch c := c.(type) {
	case nil:
		return true
	case *redis.Client:
		return c == nil
	case *redis.ClusterClient:
		return c == nil
	case *redis.Ring:
		return c == nil
	}
	return false
}

// respectsDeadlines reports whether a client of package redis honours
// context deadlines; clients of other types are trusted to. Besides
// ContextTimeoutEnabled, a client must set socket deadlines at all: a
// ReadTimeout or WriteTimeout of -2 turns them off, and the context's
// deadline with them. A Client's options are normalized (-2 reads -1,
// and -1, no timeout of its own, reads 0); a ClusterClient's and a
// Ring's are passed to their nodes' clients as given (-1 reads 0 in a
// ClusterClient's).
func respectsDeadlines(c redis.UniversalClient) bool {
	switch c := c.(type) {
	case *redis.Client:
		o := c.Options()
		return o.ContextTimeoutEnabled && o.ReadTimeout >= 0 && o.WriteTimeout >= 0
	case *redis.ClusterClient:
		o := c.Options()
		return o.ContextTimeoutEnabled && o.ReadTimeout >= -1 && o.WriteTimeout >= -1
	case *redis.Ring:
		o := c.Options()
		return o.ContextTimeoutEnabled && o.ReadTimeout >= -1 && o.WriteTimeout >= -1
	}
	return true
}

// withDefaults returns c with its zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}
