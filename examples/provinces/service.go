package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/rxhystrix/rxhystrix/command"
)

// push is one batch of data for a province.
type push struct {
	Province string
	URL      string
	Data     []byte
}

// receipt is the answer to a push: the province's, or the fallback's when
// the push could not be delivered.
type receipt struct {
	Code string
	// Failure says why the fallback answered; meaningful only when
	// Degraded.
	Failure  command.FailureType
	Degraded bool
}

// service is the seed's service A: it pushes data to every province
// through one command per province, so that each province has a breaker
// of its own.
type service struct {
	http     *http.Client
	commands map[string]*command.Command[push, receipt]
}

// isolation says how the service's commands share worker pools.
type isolation int

const (
	// poolPerURL runs the pushes to each province in a pool of its own,
	// named by the province's URL (the seed's threadPoolKey = URL).
	poolPerURL isolation = iota
	// sharedPool runs every push in the pool of the command group, as
	// Hystrix does when no threadPoolKey is given.
	sharedPool
)

// group is the command group of every push command.
const group = "Send2ProvinceCommandGroup"

func newService(reg *command.Registry, provinces []*province, cfg command.Config, iso isolation) *service {
	s := &service{
		http:     &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}},
		commands: make(map[string]*command.Command[push, receipt], len(provinces)),
	}
	cfg.Group = group
	for _, p := range provinces {
		// One command key per province: one breaker per province.
		c := command.New("Send2Province-"+p.Name, s.send, command.WithRegistry(reg), command.WithConfig(cfg)).
			WithFallback(deferred)
		if iso == poolPerURL {
			c = c.WithPoolKey(func(p push) string { return p.URL })
		}
		s.commands[p.Name] = c
	}
	return s
}

// send posts the data to the province and waits for its answer.
func (s *service) send(ctx context.Context, p push) (receipt, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(p.Data))
	if err != nil {
		return receipt{}, err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return receipt{}, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return receipt{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return receipt{}, fmt.Errorf("%s answered %s", p.Province, resp.Status)
	}
	return receipt{Code: "OK"}, nil
}

// deferred is the fallback, the seed's getFallback: the push is answered
// at once with FORWARD_PROVINCE_FAILURE (a real service would keep the
// data to push again later).
func deferred(ctx context.Context, p push, err error) (receipt, error) {
	r := receipt{Code: "FORWARD_PROVINCE_FAILURE", Degraded: true}
	var cmdErr *command.Error
	if errors.As(err, &cmdErr) {
		r.Failure = cmdErr.Failure
	}
	return r, nil
}

// push sends data to the named province.
func (s *service) push(ctx context.Context, p *province, data []byte) (receipt, error) {
	return s.commands[p.Name].Execute(ctx, push{Province: p.Name, URL: p.URL, Data: data})
}

func (s *service) close() { s.http.CloseIdleConnections() }
