package isolation

import (
	"context"
	"fmt"

	"github.com/rxhystrix/rxhystrix/command"
)

// rxhystrixClient runs every call in one rxhystrix command, as the seed
// does with one commandKey, and isolates each URL in a worker pool of its
// own, as the seed does with threadPoolKey = URL. With one command key the
// circuit breaker is shared by all URLs: one hung system of 30 stays far
// below its error threshold, so isolation alone protects the others.
type rxhystrixClient struct {
	plainClient
	cmd *command.Command[string, struct{}]
}

func newRxhystrixClient(cfg Config, urls []string) Client {
	cfg = cfg.withDefaults()
	prefix := fmt.Sprintf("isolation-%d-", runs.Add(1))
	for _, u := range urls {
		command.ConfigurePool(prefix+u, command.PoolConfig{CoreSize: cfg.PoolSize})
	}
	c := &rxhystrixClient{plainClient: plainClient{newHTTPClient()}}
	run := func(ctx context.Context, url string) (struct{}, error) {
		return struct{}{}, get(ctx, c.http, url)
	}
	c.cmd = command.New(prefix+"send-to-province", run, command.WithConfig(command.Config{Isolation: command.PoolIsolation, Timeout: cfg.Timeout})).WithPoolKey(func(url string) string { return prefix + url })
	return c
}

func (c *rxhystrixClient) Get(ctx context.Context, url string) error {
	_, err := c.cmd.Execute(ctx, url)
	return err
}

func init() {
	kinds = append(kinds, ClientKind{
		Name: "rxhystrix",
		Setup: func(cfg Config) string {
			cfg = cfg.withDefaults()
			return fmt.Sprintf("one command, one pool per URL (CoreSize %d, no queue), timeout %v", cfg.PoolSize, cfg.Timeout)
		},
		New: newRxhystrixClient,
	})
}
