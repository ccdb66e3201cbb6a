package fleet

import (
	"testing"
	"time"

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
