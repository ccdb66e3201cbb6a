package hystrixprops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
)

// Source is the properties in force for a registry's commands and pools,
// as Archaius is for Hystrix's: it keeps the code's Config of each key
// configured through it, so that new properties (a file that changed) are
// put in force for every one of them at once, resolved against the code's
// values again. A Source is safe for concurrent use.
type Source struct {
	r *command.Registry

	mu       sync.Mutex
	props    *Properties
	commands map[string]command.Config // the code's, by key
	pools    map[string]command.PoolConfig
}

// NewSource returns a Source of r whose properties are p; a nil p sets
// none.
func NewSource(r *command.Registry, p *Properties) *Source {
	if r == nil {
		panic("hystrixprops: NewSource with nil Registry")
	}
	if p == nil {
		p = &Properties{}
	}
	return &Source{r: r, props: p, commands: map[string]command.Config{}, pools: map[string]command.PoolConfig{}}
}

// Command returns the Config of the command key, resolved from code as
// Properties.Command resolves it, for command.WithConfig; and keeps code,
// so that Set resolves the key's Config again. A later Command of the
// same key replaces the code kept.
func (s *Source) Command(key string, code command.Config) command.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands[key] = code
	return s.props.Command(key, code)
}

// ConfigurePool configures the pool key in the Source's registry with
// Properties.Pool(key, code), and keeps code, so that Set configures the
// pool again. It returns the registry's error for a PoolConfig that is not
// valid.
func (s *Source) ConfigurePool(key string, code command.PoolConfig) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pools[key] = code
	return s.props.ConfigurePool(s.r, key, code)
}

// Properties returns the properties in force.
func (s *Source) Properties() *Properties {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.props
}

// Set puts p in force: each command and pool configured through the
// Source is configured again, live, with p's properties resolved against
// its code's Config (Properties.Configure and ConfigurePool). A property
// that p no longer sets falls back to the code's value, else the default
// property, else Hystrix's default, as a property removed from Archaius
// does. A key whose Config p makes invalid keeps the one before, and Set
// returns an error naming each such key, in the order of the keys; the
// others take p.
func (s *Source) Set(p *Properties) error {
	if p == nil {
		p = &Properties{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.props = p
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(s.commands)) {
		if err := p.Configure(s.r, key, s.commands[key]); err != nil {
			errs = append(errs, fmt.Errorf("command %s: %w", key, err))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(s.pools)) {
		if err := p.ConfigurePool(s.r, key, s.pools[key]); err != nil {
			errs = append(errs, fmt.Errorf("pool %s: %w", key, err))
		}
	}
	return errors.Join(errs...)
}

// PollFile reads the properties of the file path at once and then every
// interval on the Source's registry's clock, as Archaius polls its
// configuration source, and puts them in force with Set each time the
// file changed (what it holds, or whether it can be read), until ctx
// ends; then it returns ctx's error. A file that cannot be read or
// parsed, and Set's errors, are reported to report, if not nil, once for
// each change of the file; the properties before stay in force.
func (s *Source) PollFile(ctx context.Context, path string, interval time.Duration, report func(error)) error {
	if interval <= 0 {
		return fmt.Errorf("hystrixprops: PollFile: interval %v is not positive", interval)
	}
	var (
		seen    []byte // what the file held when last read
		seenErr string // or why it could not be read
		read    bool   // seen or seenErr is of a read
	)
	return s.poll(ctx, interval, func() {
		// The file is read every time, as Archaius reads it: its
		// modification time, size and inode do not tell every change
		// (cp -p writes over a file in place, and gives it the source's
		// time; a file system may keep whole seconds), and a properties
		// file is a few kilobytes.
		body, err := os.ReadFile(path)
		errText := ""
		if err != nil {
			errText = err.Error()
		}
		if read && errText == seenErr && bytes.Equal(body, seen) {
			return
		}
		seen, seenErr, read = body, errText, true
		if err := s.setRead(path, body, err); err != nil && report != nil {
			report(err)
		}
	})
}

// poll calls read at once, and then every interval on the registry's
// clock, until ctx ends; then it returns ctx's error.
func (s *Source) poll(ctx context.Context, interval time.Duration, read func()) error {
	read()
	timer := s.r.Clock().NewTimer(interval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C():
		}
		read()
		timer.Reset(interval)
	}
}

// SetFile parses the properties of the file path and puts them in force
// with Set: for a program's first read of the file, before PollFile
// follows it. A file that cannot be read or parsed changes nothing, as
// its error says.
func (s *Source) SetFile(path string) error {
	body, err := os.ReadFile(path)
	return s.setRead(path, body, err)
}

// setRead puts in force the properties of body, what a read of the file
// path gave, or returns readErr, the read's failure, saying that the
// properties before stay in force.
func (s *Source) setRead(path string, body []byte, readErr error) error {
	if readErr != nil {
		return fmt.Errorf("hystrixprops: %w; the properties before stay in force", readErr)
	}
	p, err := Parse(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w; the properties before stay in force", path, err)
	}
	return s.Set(p)
}
