package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/observable"
)

// The shop's dependencies, each behind a command: in-process stand-ins
// that answer after a few milliseconds.
type user struct {
	ID   int
	Name string
}

type order struct {
	ID    string
	Total float64
}

// shop holds the commands of an order page.
type shop struct {
	getUser            *command.Command[int, user]
	getRecommendations *command.Command[int, []string]
	getOrders          *command.ObservableCommand[int, order]
	getPrice           *command.Command[string, float64]
}

func newShop(reg *command.Registry) *shop {
	return &shop{
		getUser: command.New("GetUser", func(ctx context.Context, id int) (user, error) {
			if err := pause(ctx); err != nil {
				return user{}, err
			}
			return user{ID: id, Name: "Ada"}, nil
		}, command.WithRegistry(reg)),

		// The recommendation service is down; the fallback offers the
		// bestsellers.
		getRecommendations: command.New("GetRecommendations", func(ctx context.Context, id int) ([]string, error) {
			return nil, errors.New("recommendation service unavailable")
		}, command.WithRegistry(reg)).WithFallback(func(ctx context.Context, id int, err error) ([]string, error) {
			return []string{"bestseller-1", "bestseller-2"}, nil
		}),

		// An ObservableCommand emits the orders one by one: each is an
		// EMIT event.
		getOrders: command.NewObservable("GetOrders", func(ctx context.Context, userID int) observable.Observable[order] {
			return observable.Defer(func() observable.Observable[order] {
				if err := pause(ctx); err != nil {
					return observable.Error[order](err)
				}
				return observable.Just(
					order{ID: "o-1", Total: 35.50},
					order{ID: "o-2", Total: 120.00},
					order{ID: "o-3", Total: 250.00})
			})
		}, command.WithRegistry(reg)),

		getPrice: command.New("GetPrice", func(ctx context.Context, sku string) (float64, error) {
			if err := pause(ctx); err != nil {
				return 0, err
			}
			price, ok := prices[sku]
			if !ok {
				return 0, command.BadRequest(fmt.Errorf("no such sku %q", sku))
			}
			return price, nil
		}, command.WithRegistry(reg)),
	}
}

var prices = map[string]float64{"apple": 1.20, "bread": 2.50, "cheese": 7.80}

// pause is a downstream's answer time.
func pause(ctx context.Context) error {
	t := time.NewTimer(5 * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
