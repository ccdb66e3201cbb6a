package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
)

// request asks GetUser for the user ID, served by Backend: each step of
// the walk picks how the user service behaves.
type request struct {
	ID      int
	Backend backend
}

// backend is the user service behind GetUser.
type backend func(ctx context.Context, id int) (string, error)

// noDefault is a user ID the fallback has no default for.
const noDefault = 0

// lookUp is GetUser's run: it checks its input, then asks the user
// service.
func lookUp(ctx context.Context, r request) (string, error) {
	if r.ID < 0 {
		return "", command.BadRequest(fmt.Errorf("user id %d is negative", r.ID))
	}
	return r.Backend(ctx, r.ID)
}

// anonymous is GetUser's fallback: a default user, labelled with the
// reason run gave no answer.
func anonymous(ctx context.Context, r request, err error) (string, error) {
	if r.ID == noDefault {
		return "", errors.New("no default for user 0")
	}
	var cmdErr *command.Error
	if errors.As(err, &cmdErr) {
		return fmt.Sprintf("anonymous (fallback after %v)", cmdErr.Failure), nil
	}
	return "anonymous", nil
}

func healthy(ctx context.Context, id int) (string, error) {
	return fmt.Sprintf("user-%d", id), nil
}

func broken(ctx context.Context, id int) (string, error) {
	return "", errors.New("connection reset by peer")
}

// hanging never answers: it returns only when its context ends, at the
// timeout.
func hanging(ctx context.Context, id int) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

// held answers once release is closed, after closing started.
func held(started chan<- struct{}, release <-chan struct{}) backend {
	return func(ctx context.Context, id int) (string, error) {
		close(started)
		select {
		case <-release:
			return healthy(ctx, id)
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// sleepUntil waits until t, or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
