package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/httpcommand"
)

// transportService is service A with its isolation in one line: its HTTP
// client's transport runs every push as a command keyed by the
// province's host, each host with a breaker and a pool of its own, so the
// pushes need no command of their own.
type transportService struct{ client *http.Client }

func newTransportService(reg *command.Registry, cfg command.Config, poolSize int) *transportService {
	client := &http.Client{}
	client.Transport = httpcommand.New(
		httpcommand.WithBase(&http.Transport{MaxIdleConnsPerHost: 16}),
		httpcommand.WithRegistry(reg),
		httpcommand.WithConfig(func(string) command.Config { return cfg }),
		httpcommand.WithPoolConfig(func(string) command.PoolConfig { return command.PoolConfig{CoreSize: poolSize} }),
	)
	return &transportService{client: client}
}

// push posts the data to the province; a push the transport fails (timed
// out, rejected, short-circuited, a 5xx) is answered as the seed's
// fallback answers it.
func (s *transportService) push(ctx context.Context, p *province, data []byte) (receipt, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(data))
	if err != nil {
		return receipt{}, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return deferred(ctx, push{Province: p.Name, URL: p.URL, Data: data}, err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return receipt{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return receipt{}, fmt.Errorf("%s answered %s", p.Name, resp.Status)
	}
	return receipt{Code: "OK"}, nil
}

func (s *transportService) close() { s.client.CloseIdleConnections() }
