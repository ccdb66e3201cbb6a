package command

import "context"

// OneAttempt returns a context under which a call of a command makes one
// execution, whatever its key's Config says: no retry (Config.Retry) and
// no hedge (Config.Hedge). It is for work that must not be repeated, or
// cannot be: a request that is not idempotent, or whose body cannot be
// sent again, to a downstream whose other calls are retried. Everything
// else of the key applies as usual, the fallback and the rate limit
// included. A collapser's batch is one call of its batch command for many
// requests, and a request's context does not reach it: a batch that must
// not be repeated needs a batch command whose key neither retries nor
// hedges.
func OneAttempt(ctx context.Context) context.Context {
	return context.WithValue(ctx, oneAttemptKey{}, true)
}

type oneAttemptKey struct{}

// makesAttempts reports whether a call of a command of cfg under ctx, the
// caller's context, may make more than one execution. A key without
// retries or hedges answers without looking ctx up.
func makesAttempts(cfg *Config, ctx context.Context) bool {
	return cfg.makesAttempts() && ctx.Value(oneAttemptKey{}) == nil
}
