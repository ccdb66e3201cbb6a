package clock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
)

// A test of a command's breaker on a manual clock: the breaker opens on
// the health snapshot after the failures, short-circuits until the sleep
// window has passed, and closes on a trial that succeeds; no sleep.
func Example_breaker() {
	mc := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := command.NewRegistry(command.WithClock(mc))
	defer reg.Close()

	down := true
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		if down {
			return "", errors.New("connection refused")
		}
		return fmt.Sprint("user-", id), nil
	}, command.WithRegistry(reg), command.WithConfig(command.Config{
		Isolation: command.SemaphoreIsolation,
		Breaker:   breaker.Config{RequestVolumeThreshold: 4, SleepWindow: 5 * time.Second},
	}))
	b := getUser.Breaker()

	for range 4 {
		getUser.Execute(context.Background(), 1)
	}
	fmt.Println("after 4 failures:", b.State())
	mc.Advance(500 * time.Millisecond) // the next health snapshot
	fmt.Println("after the snapshot:", b.State())
	_, err := getUser.Execute(context.Background(), 1)
	fmt.Println("short-circuited:", errors.Is(err, command.ErrShortCircuited))

	down = false
	mc.Advance(5*time.Second + time.Millisecond) // past the sleep window
	v, err := getUser.Execute(context.Background(), 1)
	fmt.Println("the trial:", v, err)
	fmt.Println("after the trial:", b.State())
	// Output:
	// after 4 failures: CLOSED
	// after the snapshot: OPEN
	// short-circuited: true
	// the trial: user-1 <nil>
	// after the trial: CLOSED
}
