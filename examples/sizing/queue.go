package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// durableQueue keeps the writes B could not take, one JSON line each, in
// a file synced at every append, so they survive a crash of the service.
// It is safe for concurrent use.
type durableQueue struct {
	path string

	mu     sync.Mutex
	f      *os.File
	queued map[string]bool // the IDs of every order ever queued
}

func openQueue(dir string) (*durableQueue, error) {
	q := &durableQueue{path: filepath.Join(dir, "orders.queue"), queued: map[string]bool{}}
	f, err := os.OpenFile(q.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	q.f = f
	return q, nil
}

// append writes o to the end of the queue and syncs the file.
func (q *durableQueue) append(o order) error {
	line, err := json.Marshal(o)
	if err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, err := q.f.Write(append(line, '\n')); err != nil {
		return err
	}
	if err := q.f.Sync(); err != nil {
		return err
	}
	q.queued[o.ID] = true
	return nil
}

// take moves the queued writes aside for a replay and returns them with
// done, which the replayer calls once they are all written (or queued
// again): until then they stay on disk, in a file next to the queue.
func (q *durableQueue) take() (orders []order, done func() error, err error) {
	replaying := q.path + ".replaying"
	q.mu.Lock()
	err = q.f.Close()
	if err == nil {
		err = os.Rename(q.path, replaying)
	}
	if err == nil {
		q.f, err = os.OpenFile(q.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	}
	q.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	f, err := os.Open(replaying)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		var o order
		if err := json.Unmarshal(lines.Bytes(), &o); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", replaying, err)
		}
		orders = append(orders, o)
	}
	if err := lines.Err(); err != nil {
		return nil, nil, err
	}
	return orders, func() error { return os.Remove(replaying) }, nil
}

// len returns how many writes are queued on disk.
func (q *durableQueue) len() (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	data, err := os.ReadFile(q.path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	n := 0
	for _, b := range data {
		if b == '\n' {
			n++
		}
	}
	return n, err
}

// total returns how many distinct orders were ever queued.
func (q *durableQueue) total() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queued)
}

func (q *durableQueue) close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.f.Close()
}
