package main

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/hystrixprops"
)

// scenario sets what changes over the demo's run.
type scenario struct {
	// PaymentGateway's downstream fails from paymentFailFrom to
	// paymentFailFrom+paymentFailFor of every paymentCycle of the run.
	paymentFailFrom, paymentFailFor, paymentCycle time.Duration
	// sleepWindow is the circuit breakers' sleep window; 0 means
	// Hystrix's 5s.
	sleepWindow time.Duration
	// properties names a file of Hystrix's properties that configure the
	// commands over their code's Configs, read again when it changes
	// (-hystrix-properties); "" for none.
	properties string
}

// defaultScenario: the payment downstream answers for 10s, fails for
// 15s, and so on.
var defaultScenario = scenario{paymentFailFrom: 10 * time.Second, paymentFailFor: 15 * time.Second, paymentCycle: 25 * time.Second}

// paymentFails reports whether the payment downstream fails after elapsed.
func (sc scenario) paymentFails(elapsed time.Duration) bool {
	if sc.paymentCycle <= 0 {
		return false
	}
	at := elapsed % sc.paymentCycle
	return at >= sc.paymentFailFrom && at < sc.paymentFailFrom+sc.paymentFailFor
}

// errPaymentUnavailable is what the failing downstream answers.
var errPaymentUnavailable = errors.New("payment gateway: 503 Service Unavailable")

type user struct {
	ID   int
	Name string
}

// startTraffic makes the demo's commands and collapser in reg, each
// configured by props over its code's Config, and starts their callers,
// and the callers of the demo's API at base, which stop when ctx ends;
// wait on the WaitGroup for them.
func startTraffic(ctx context.Context, reg *command.Registry, props *hystrixprops.Source, sc scenario, base string) *sync.WaitGroup {
	const ms = time.Millisecond
	started := time.Now()
	brk := breaker.Config{SleepWindow: sc.sleepWindow}

	// A healthy downstream, in the worker pool of its group.
	getUser := command.New("GetUser", func(ctx context.Context, id int) (user, error) {
		if err := downstream(ctx, between(3*ms, 25*ms)); err != nil {
			return user{}, err
		}
		return user{ID: id, Name: "user-" + strconv.Itoa(id)}, nil
	}, command.WithRegistry(reg), command.WithConfig(props.Command("GetUser", command.Config{Group: "UserService", Breaker: brk})))

	// A slow downstream under semaphore isolation: calls past 300ms time
	// out and the fallback answers. Its breaker throttles below a 95%
	// success rate, Envoy's admission control default: with some 13% of
	// the calls timing out, it refuses about as many, which the fallback
	// answers at once, and stays closed.
	recommendationsBreaker := brk
	recommendationsBreaker.ThrottleSuccessPercentage = 95
	getRecommendations := command.New("GetRecommendations", func(ctx context.Context, id int) ([]string, error) {
		latency := between(40*ms, 200*ms)
		if rand.IntN(100) < 15 {
			latency = between(250*ms, 700*ms)
		}
		if err := downstream(ctx, latency); err != nil {
			return nil, err
		}
		return []string{"book", "lamp"}, nil
	}, command.WithRegistry(reg), command.WithConfig(props.Command("GetRecommendations", command.Config{Group: "RecommendationService", Isolation: command.SemaphoreIsolation,
		Timeout: 300 * ms, Breaker: recommendationsBreaker}))).WithFallback(func(ctx context.Context, id int, err error) ([]string, error) { return nil, nil })

	// A downstream that fails for a while: the circuit opens, lets a
	// trial through every sleep window, and closes once a trial succeeds.
	// Each failed trial doubles the window, up to four times the first,
	// and the dashboard shows it grow.
	paymentBreaker := brk
	paymentBreaker.MaxSleepWindow = 4 * cmp.Or(sc.sleepWindow, breaker.DefaultSleepWindow)
	payment := command.New("PaymentGateway", func(ctx context.Context, amount int) (string, error) {
		if sc.paymentFails(time.Since(started)) {
			if err := downstream(ctx, between(5*ms, 20*ms)); err != nil {
				return "", err
			}
			return "", errPaymentUnavailable
		}
		if err := downstream(ctx, between(20*ms, 60*ms)); err != nil {
			return "", err
		}
		return "paid " + strconv.Itoa(amount), nil
	}, command.WithRegistry(reg), command.WithConfig(props.Command("PaymentGateway", command.Config{Group: "PaymentService", Breaker: paymentBreaker})))

	// A pool too small for its callers: 4 workers and a queue of 2 for 7
	// callers, so some calls are rejected and the fallback answers.
	if err := props.ConfigurePool("SearchService", command.PoolConfig{CoreSize: 4, MaxQueueSize: 2, QueueSizeRejectionThreshold: 2}); err != nil {
		panic(err) // the configuration above is valid
	}
	search := command.New("SearchProducts", func(ctx context.Context, q string) ([]string, error) {
		if err := downstream(ctx, between(40*ms, 150*ms)); err != nil {
			return nil, err
		}
		return []string{q + " 1", q + " 2"}, nil
	}, command.WithRegistry(reg), command.WithConfig(props.Command("SearchProducts", command.Config{Group: "SearchService", Breaker: brk}))).WithFallback(func(ctx context.Context, q string, err error) ([]string, error) { return nil, nil })

	// A dependency switched off by configuration: its circuit is forced
	// open, every call is short-circuited to the fallback.
	inventory := command.New("LegacyInventory", func(ctx context.Context, sku string) (int, error) {
		return 0, downstream(ctx, between(10*ms, 30*ms))
	}, command.WithRegistry(reg), command.WithConfig(props.Command("LegacyInventory", command.Config{Group: "InventoryService", Breaker: breaker.Config{ForceOpen: true}}))).WithFallback(func(ctx context.Context, sku string, err error) (int, error) { return -1, nil })

	// Price lookups, collapsed: the lookups of every caller within 10ms
	// go to the downstream as one batch, run by the command GetPriceBatch.
	prices := command.NewCollapser("GetPrice", func(ctx context.Context, skus []string) ([]int, error) {
		if err := downstream(ctx, between(5*ms, 15*ms)); err != nil {
			return nil, err
		}
		out := make([]int, len(skus))
		for i := range skus {
			out[i] = 100 + i
		}
		return out, nil
	}, command.WithRegistry(reg),
		command.WithCollapserConfig(props.Properties().Collapser("GetPrice", command.CollapserConfig{Scope: command.GlobalScope})),
		command.WithConfig(props.Command("GetPriceBatch", command.Config{Group: "PriceService", Isolation: command.SemaphoreIsolation, Breaker: brk})))

	// Each call is one request of the service, with a request context
	// that ends when the call returns: the requests stream shows each.
	var wg sync.WaitGroup
	callers := func(n int, pause time.Duration, call func(ctx context.Context, k int)) {
		for range n {
			wg.Go(func() {
				for k := 0; ; k++ {
					request, end := context.WithCancel(ctx)
					call(command.WithRequestContext(request), k)
					end()
					if downstream(ctx, between(pause/2, pause*3/2)) != nil {
						return
					}
				}
			})
		}
	}
	// The callers ignore results and errors: the metrics record them.
	callers(3, 100*ms, func(ctx context.Context, k int) { getUser.Execute(ctx, k) })
	callers(4, 150*ms, func(ctx context.Context, k int) { getRecommendations.Execute(ctx, k) })
	callers(3, 50*ms, func(ctx context.Context, k int) { payment.Execute(ctx, 10+k%90) })
	callers(7, 35*ms, func(ctx context.Context, k int) { search.Execute(ctx, "lamp") })
	callers(1, 200*ms, func(ctx context.Context, k int) { inventory.Execute(ctx, "sku-"+strconv.Itoa(k)) })
	callers(6, 40*ms, func(ctx context.Context, k int) { prices.Execute(ctx, "sku-"+strconv.Itoa(rand.IntN(50))) })
	api := checkoutClient(reg)
	callers(3, 100*ms, func(ctx context.Context, k int) { checkOut(ctx, api, base) })
	return &wg
}

// downstream stands for a call that takes latency, or less if ctx ends
// first, when it returns ctx's error.
func downstream(ctx context.Context, latency time.Duration) error {
	t := time.NewTimer(latency)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// between returns a random duration in [lo, hi).
func between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + rand.N(hi-lo)
}
