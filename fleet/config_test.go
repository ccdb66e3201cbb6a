package fleet

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
)

// A Config's zero Prefix and Timeout are the defaults; others stay.
func TestConfigDefaults(t *testing.T) {
	got := Config{Instance: "a"}.withDefaults()
	assert.Equal(t, DefaultPrefix, got.Prefix)
	assert.Equal(t, DefaultTimeout, got.Timeout)
	got = Config{Instance: "a", Prefix: "svc:", Timeout: time.Second}.withDefaults()
	assert.Equal(t, "svc:", got.Prefix)
	assert.Equal(t, time.Second, got.Timeout)
}

// A go-redis client whose read or write deadlines are turned off (a
// timeout of -2) ignores the context's deadline on the socket, whatever
// ContextTimeoutEnabled says: Config.Timeout would not bound an
// exchange with a Redis that hangs, nor Close wait only that long.
func TestValidateRefusesAClientThatSetsNoDeadlines(t *testing.T) {
	const addr = "127.0.0.1:1" // never dialled: Validate does not connect
	clients := map[string]redis.UniversalClient{
		"Client ReadTimeout -2":  redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, ReadTimeout: -2}),
		"Client WriteTimeout -2": redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, WriteTimeout: -2}),
		"ClusterClient ReadTimeout -2": redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr},
			ContextTimeoutEnabled: true, ReadTimeout: -2}),
		"Ring ReadTimeout -2": redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": addr},
			ContextTimeoutEnabled: true, ReadTimeout: -2}),
	}
	for name, c := range clients {
		err := Config{Client: c, Instance: "a"}.Validate()
		assert.ErrorIs(t, err, ErrInvalidConfig, name)
		assert.ErrorContains(t, err, "Config.Client", name)
		_ = c.Close()
	}
	ok := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, ReadTimeout: -1})
	defer ok.Close()
	assert.NoError(t, Config{Client: ok, Instance: "a"}.Validate(), "-1 is no timeout of its own: the context's deadline holds")
}

// A nil *redis.Client in the interface is a missing Client, not a panic.
func TestValidateNamesANilClientOfAConcreteType(t *testing.T) {
	for _, c := range []redis.UniversalClient{(*redis.Client)(nil), (*redis.ClusterClient)(nil), (*redis.Ring)(nil)} {
		var err error
		assert.NotPanics(t, func() { err = Config{Client: c, Instance: "a"}.Validate() }, "%T", c)
		assert.ErrorIs(t, err, ErrInvalidConfig, "%T", c)
		assert.ErrorContains(t, err, "Config.Client is nil", "%T", c)
	}
}

// A brace in Prefix would take the place of the hash tag the braces
// around the command key make: "x{}" gives an empty tag, and Redis
// Cluster would put a key's buckets, which one script reads and writes,
// in different slots (CROSSSLOT). It is refused, naming the field.
func TestValidateRefusesABraceInThePrefix(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer c.Close()
	for _, prefix := range []string{"x{}", "svc{a}:", "svc}:"} {
		err := Config{Client: c, Instance: "a", Prefix: prefix}.Validate()
		assert.ErrorIs(t, err, ErrInvalidConfig, prefix)
		assert.ErrorContains(t, err, "Config.Prefix", prefix)
	}
	assert.NoError(t, Config{Client: c, Instance: "a", Prefix: "svc:fleet:"}.Validate())
}

// A command key that begins with '}' closes the hash tag at once: the
// tag is empty, Redis Cluster hashes each bucket's whole name, and the
// script's keys land in different slots (CROSSSLOT at every exchange),
// which is what Validate refuses a brace in Prefix for.
func TestValidateRefusesAKeyThatEmptiesTheHashTag(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	err := Config{Client: rdb, Instance: "a", Keys: []string{"ok", "}x"}}.Validate()
	assert.ErrorIs(t, err, ErrInvalidConfig)
	assert.ErrorContains(t, err, "Config.Keys[1]")
	assert.NoError(t, Config{Client: rdb, Instance: "a", Keys: []string{"a}b", "{x}"}}.Validate(),
		"a brace further in leaves a non-empty tag, the same for all of the key's names")
}

// A mark is named <prefix>{<key>}:<interval>:mark:<instance>: an
// instance named with '}' could name it as a bucket of another key that
// holds '}' (instance "x}:500ms:5" of key "K" and bucket 5 of key
// "K}:500ms:mark:x"), and the two would overwrite each other.
func TestValidateRefusesABraceInTheInstance(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", ContextTimeoutEnabled: true})
	defer rdb.Close()
	err := Config{Client: rdb, Instance: "x}:500ms:5"}.Validate()
	assert.ErrorIs(t, err, ErrInvalidConfig)
	assert.ErrorContains(t, err, `Config.Instance "x}:500ms:5" holds '}'`)
	assert.NoError(t, Config{Client: rdb, Instance: "host-a:4242"}.Validate())
}
