package command

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// ErrInvalidKey is found (with errors.Is) in the error of a key that
// cannot name a command, a pool or a cache entry: an empty one, or one
// that is not valid UTF-8. Keys become metric labels and stream fields,
// which must be text.
var ErrInvalidKey = errors.New("invalid key")

// ValidKey reports whether key can name a command, a pool or a cache
// entry: it is not empty and is valid UTF-8. A key that is not gives an
// error that is ErrInvalidKey wherever this package is handed it; a
// package that computes keys for its commands (from a request, say)
// checks them with ValidKey to say which request had the bad one.
func ValidKey(key string) bool { return key != "" && utf8.ValidString(key) }

// checkKey returns an error that is ErrInvalidKey (by errors.Is) if key
// is not valid (ValidKey); what names the key in the message ("key",
// "pool key").
func checkKey(what, key string) error {
	switch {
	case ValidKey(key):
		return nil
	case key == "":
		return invalidKeyError(what + " is empty")
	}
	return invalidKeyError(fmt.Sprintf("%s %q is not valid UTF-8", what, key))
}

// mustKey panics, naming the constructor kind, if key is invalid.
func mustKey(kind, key string) {
	if err := checkKey("key", key); err != nil {
		panic(fmt.Sprintf("command: %s: %v", kind, err))
	}
}

// invalidKeyError says what is wrong with a key.
type invalidKeyError string

func (e invalidKeyError) Error() string        { return string(e) }
func (e invalidKeyError) Is(target error) bool { return target == ErrInvalidKey }

// KeyFuncError is the error of a WithPoolKey or WithCacheKey function
// that panicked or returned an invalid key. Its Err is the *PanicError or
// the error wrapping ErrInvalidKey, found by errors.Is and errors.As.
//
// A pool key function runs where run would, once the breaker has let the
// execution through: its failure is the execution's, recorded as FAILURE
// and counted in the breaker's health, with the fallback applied, and the
// caller's *Error has the KeyFuncError as its Cause. A cache key function
// runs before the execution begins, as Hystrix's getCacheKey: its failure
// is returned to the caller as it is, nothing is recorded and no fallback
// runs.
type KeyFuncError struct {
	// Command is the command (or collapser) key.
	Command string
	// Option is the option that gave the function: "WithPoolKey" or
	// "WithCacheKey".
	Option string
	// Err is why no key came of it.
	Err error
}

// Error names the command, the option and what went wrong.
func (e *KeyFuncError) Error() string {
	return fmt.Sprintf("command %q: %s function: %v", e.Command, e.Option, e.Err)
}

// Unwrap returns Err.
func (e *KeyFuncError) Unwrap() error { return e.Err }

// cacheKeyOf returns the cache key f gives in, for the command (or
// collapser) key, or the *KeyFuncError of f's panic. Any string is a cache
// key.
func cacheKeyOf[In any](key string, f func(In) string, in In) (string, error) {
	return callKeyFunc(key, "WithCacheKey", f, in)
}

// poolKeyOf returns the pool key f gives in, for the command key, or the
// *KeyFuncError of f's panic or of a key that cannot name a pool.
func poolKeyOf[In any](key string, f func(In) string, in In) (string, error) {
	const option = "WithPoolKey"
	k, err := callKeyFunc(key, option, f, in)
	if err != nil {
		return "", err
	}
	if err := checkKey("pool key", k); err != nil {
		return "", &KeyFuncError{Command: key, Option: option, Err: err}
	}
	return k, nil
}

// callKeyFunc calls the key function f of the command key, given by
// option, turning a panic into a *KeyFuncError.
func callKeyFunc[In any](key, option string, f func(In) string, in In) (k string, err error) {
	defer func() {
		if v := recover(); v != nil {
			k, err = "", &KeyFuncError{Command: key, Option: option, Err: newPanicError(v)}
		}
	}()
	return f(in), nil
}
