package crew

import (
	"context"
	"errors"
	"fmt"
)

// A Teller takes messages: *Ref and *Router are Tellers.
type Teller[T any] interface {
	Tell(ctx context.Context, msg T) error
}

// Forward tells to each message received from ch, in order, until ch is
// closed (it returns nil), ctx ends (ctx.Err()) or the target can take no
// more: ErrStopped (the message that found it stopped is its dead letter) or
// ErrNoRoutee from a router whose routees all stopped (that message went
// nowhere; the error says so). It is the adapter for the channels users
// already have: run it on a goroutine of your own. A message refused for
// another reason (a full mailbox) is a dead letter of the target, and
// Forward goes on. Messages left in ch when Forward returns stay there.
// It panics if ctx, ch or to is nil.
func Forward[T any](ctx context.Context, ch <-chan T, to Teller[T]) error {
	if ctx == nil {
		panic("crew: Forward: nil context")
	}
	switch t := to.(type) {
	case nil:
		panic("crew: Forward: nil target")
	case *Ref[T]:
		if t == nil {
			panic("crew: Forward: nil target (a nil *Ref)")
		}
	case *Router[T]:
		if t == nil {
			panic("crew: Forward: nil target (a nil *Router)")
		}
	}
	if ch == nil {
		panic("crew: Forward: nil channel: receiving from it would block until ctx ends")
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case msg, ok := <-ch:
			if !ok {
				return nil
			}
			err := to.Tell(ctx, msg)
			switch {
			case err == nil:
			case errors.Is(err, ErrStopped):
				return err
			case errors.Is(err, ErrNoRoutee):
				return fmt.Errorf("crew: Forward: a message was not delivered: %w", err)
			case ctx.Err() != nil:
				return ctx.Err()
			}
		}
	}
}
