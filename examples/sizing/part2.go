package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
)

// shop is service A of part 2: it reads products from B and writes
// orders to B, each through a command with the fallback the seed
// recommends.
type shop struct {
	url    string
	client *http.Client
	queue  *durableQueue

	mu    sync.Mutex
	cache map[int]product // what B last answered, by product ID

	getProduct *command.Command[int, product]
	saveOrder  *command.Command[order, bool] // true when the order was queued

	orders   atomic.Int64 // orders written by the traffic
	replayed atomic.Int64 // queued orders replayed into B
}

func newShop(reg *command.Registry, url string, queue *durableQueue) *shop {
	s := &shop{url: url, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}, queue: queue, cache: map[int]product{}}
	cfg := command.Config{
		Timeout: goodTimeout,
		Breaker: breaker.Config{SleepWindow: time.Second},
	}
	s.getProduct = command.New("GetProduct", s.fetch, command.WithRegistry(reg), command.WithConfig(cfg)).WithFallback(s.fromLocalCache)
	// The queue's fallback syncs a file, one write at a time, and a sync
	// on a busy disk may take a second: with Hystrix's 10 fallback
	// permits, the 20 writes a second of an outage would find them all
	// taken and fail. 100 covers five seconds of writes.
	queueing := cfg
	queueing.FallbackMaxConcurrentRequests = 100
	s.saveOrder = command.New("SaveOrder", s.save, command.WithRegistry(reg), command.WithConfig(queueing)).WithFallback(s.enqueue)
	return s
}

// fetch reads a product from B and keeps it in the local cache.
func (s *shop) fetch(ctx context.Context, id int) (product, error) {
	body, err := get(ctx, s.client, fmt.Sprintf("%s/products/%d", s.url, id))
	if err != nil {
		return product{}, err
	}
	var p product
	if err := json.Unmarshal(body, &p); err != nil {
		return product{}, err
	}
	s.mu.Lock()
	s.cache[id] = p
	s.mu.Unlock()
	return p, nil
}

// fromLocalCache is the read fallback: what B last said of the product.
func (s *shop) fromLocalCache(ctx context.Context, id int, err error) (product, error) {
	s.mu.Lock()
	p, ok := s.cache[id]
	s.mu.Unlock()
	if !ok {
		return product{}, fmt.Errorf("product %d is not in the local cache", id)
	}
	p.FromCache = true
	return p, nil
}

// save writes an order to B.
func (s *shop) save(ctx context.Context, o order) (bool, error) {
	body, err := json.Marshal(o)
	if err != nil {
		return false, command.BadRequest(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/orders", bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("saving order %s: %s", o.ID, resp.Status)
	}
	return false, nil
}

// enqueue is the write fallback: the order goes to the durable queue, to
// be replayed into B later.
func (s *shop) enqueue(ctx context.Context, o order, err error) (bool, error) {
	if err := s.queue.append(o); err != nil {
		return false, err
	}
	return true, nil
}

// replay writes the queued orders to B, through SaveOrder: an order B
// still cannot take is queued again.
func (s *shop) replay(ctx context.Context) error {
	orders, done, err := s.queue.take()
	if err != nil {
		return err
	}
	for i, o := range orders {
		queued, err := s.saveOrder.Execute(ctx, o)
		if err != nil { // ctx ended: the orders not replayed go back in the queue
			for _, o := range orders[i:] {
				if err := s.queue.append(o); err != nil {
					return err
				}
			}
			return errors.Join(err, done())
		}
		if !queued {
			s.replayed.Add(1)
		}
	}
	return done()
}

// replayOnClose replays the queue each time SaveOrder's breaker closes,
// that is when B has come back, until ctx ends. Each replay's error (nil
// on success) is sent on the returned channel.
func (s *shop) replayOnClose(ctx context.Context) <-chan error {
	closed := make(chan struct{}, 1)
	s.saveOrder.Breaker().Transitions().SubscribeFunc(ctx, func(t breaker.Transition) {
		if t.To == breaker.Closed {
			select {
			case closed <- struct{}{}:
			default: // a replay is due already
			}
		}
	}, nil, nil)
	replays := make(chan error, 1)
	go func() {
		defer close(replays)
		for {
			select {
			case <-closed:
			case <-ctx.Done():
				return
			}
			err := s.replay(ctx)
			select {
			case replays <- err:
			case <-ctx.Done():
				return
			}
		}
	}()
	return replays
}

func (s *shop) close() { s.client.CloseIdleConnections() }

// traffic sends the shop a read and a write 20 times a second until
// finished, and counts what they came to.
type traffic struct {
	stop chan struct{}
	done chan struct{}

	mu                          sync.Mutex
	fromB, fromCache, readFails int
	saved, queued, writeFails   int
	writeFailure                error // the first write's that failed
}

// startTraffic starts reading the products 1 to products and writing
// orders.
func startTraffic(ctx context.Context, s *shop, products int) *traffic {
	t := &traffic{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(t.done)
		var calls sync.WaitGroup
		defer calls.Wait()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-tick.C:
			case <-t.stop:
				return
			case <-ctx.Done():
				return
			}
			id := i%products + 1
			o := order{ID: fmt.Sprintf("order-%d", s.orders.Add(1)), Product: id}
			calls.Go(func() { t.read(ctx, s, id) })
			calls.Go(func() { t.write(ctx, s, o) })
		}
	}()
	return t
}

func (t *traffic) read(ctx context.Context, s *shop, id int) {
	p, err := s.getProduct.Execute(ctx, id)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case err != nil:
		t.readFails++
	case p.FromCache:
		t.fromCache++
	default:
		t.fromB++
	}
}

func (t *traffic) write(ctx context.Context, s *shop, o order) {
	queued, err := s.saveOrder.Execute(ctx, o)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case err != nil:
		if t.writeFails == 0 {
			t.writeFailure = err
		}
		t.writeFails++
	case queued:
		t.queued++
	default:
		t.saved++
	}
}

// finish stops the traffic once its calls have ended and sums it up.
func (t *traffic) finish() string {
	close(t.stop)
	<-t.done
	s := fmt.Sprintf("reads: %d from B, %d from the local cache, %d failed; writes: %d saved, %d queued",
		t.fromB, t.fromCache, t.readFails, t.saved, t.queued)
	if t.writeFails > 0 {
		s += fmt.Sprintf(", %d failed (the first: %v)", t.writeFails, t.writeFailure)
	}
	return s
}

// degradation runs part 2: B goes down for outage and comes back.
func degradation(ctx context.Context, w io.Writer, outage time.Duration) error {
	dir, err := os.MkdirTemp("", "sizing-queue-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	queue, err := openQueue(dir)
	if err != nil {
		return err
	}
	defer queue.close()

	inv := newInventory()
	server := httptest.NewServer(inv)
	defer server.Close()
	reg := command.NewRegistry()
	defer reg.Close()
	s := newShop(reg, server.URL, queue)
	defer s.close()
	replayCtx, stopReplays := context.WithCancel(ctx)
	defer stopReplays()
	replays := s.replayOnClose(replayCtx)

	fmt.Fprintln(w, "part 2, degradation: 20 reads and 20 writes a second; reads fall back to a local cache, writes to a durable queue (a file)")
	const cached = 10 // products read while B is up
	t := startTraffic(ctx, s, cached)
	if err := sleep(ctx, time.Second); err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-17s %s\n", "B up for 1s:", t.finish())

	inv.down.Store(true)
	t = startTraffic(ctx, s, cached+2) // two products never read before
	if err := sleep(ctx, outage); err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-17s %s\n", fmt.Sprintf("B down for %v:", outage), t.finish())

	// B comes back: the first write after the sleep window closes
	// SaveOrder's breaker, which starts the replay.
	inv.down.Store(false)
	start := time.Now()
	t = startTraffic(ctx, s, cached+2)
	select {
	case err = <-replays:
	case <-ctx.Done():
		err = fmt.Errorf("waiting for the replay: %w", ctx.Err())
	}
	summary := t.finish()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-17s %s\n", "B back:", summary)
	fmt.Fprintf(w, "  SaveOrder's breaker closed %.1fs after B came back, and the queue was replayed\n", time.Since(start).Seconds())
	stopReplays()
	for range replays { // the replayer has stopped
	}
	// Writes queued while the replay ran are replayed now.
	if err := s.replay(ctx); err != nil {
		return err
	}
	left, err := queue.len()
	if err != nil {
		return err
	}
	written, held := int(s.orders.Load()), inv.stored()
	fmt.Fprintf(w, "  orders written %d, queued %d, replayed %d, still queued %d, held by B %d",
		written, queue.total(), s.replayed.Load(), left, held)
	if held == written && left == 0 {
		fmt.Fprintln(w, ": none lost")
	} else {
		fmt.Fprintln(w, ": some lost")
	}
	return nil
}
