package crew_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// A Tell that finds the actor busy sends it no signal: the actor reads its
// mailbox once more after it clears busy and before it parks. These tests
// race Tells against the actor going idle, round after round, and against
// the goroutine that replaces one a runtime.Goexit ended. A lost wake-up
// would leave a message queued for a parked actor; synctest then finds
// every goroutine of the bubble blocked and fails the test, with no
// timeout to wait for. (No Bounded here is ever full: a blocked sender
// waits on a recycled channel, which must not cross into a bubble.)

// tellRounds tells producers messages at once, rounds times, to whatever
// tell sends to, and waits each time until all were handled: the next
// round's Tells then race the actor (or the routees) going idle.
func tellRounds(t *testing.T, producers, rounds int, tell func(v int) error, handled <-chan int) {
	t.Helper()
	var wg sync.WaitGroup
	for round := range rounds {
		for p := range producers {
			wg.Go(func() {
				if err := tell(round*producers + p); err != nil {
					panic(err) // a failed Tell would leave the round waiting
				}
			})
		}
		for range producers {
			<-handled
		}
		wg.Wait()
	}
}

func TestTellRacingTheActorGoingIdleLosesNoWakeUp(t *testing.T) {
	const producers, rounds = 3, 5000
	for _, mb := range []struct {
		name string
		make func() crew.Mailbox[int]
	}{
		{"Unbounded", func() crew.Mailbox[int] { return crew.NewUnbounded[int]() }},
		{"Segmented", func() crew.Mailbox[int] { return crew.NewSegmented[int]() }},
		{"Bounded", func() crew.Mailbox[int] { return crew.NewBounded[int](producers, crew.Backpressure) }},
		{"Fair", func() crew.Mailbox[int] { return crew.NewFair(func(v int) int { return v % 2 }) }},
	} {
		t.Run(mb.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				handled := make(chan int, producers)
				ref := crew.Spawn(ctx, func(_ context.Context, v int) error {
					handled <- v
					if v%7 == 0 {
						runtime.Goexit() // a new goroutine goes on, its busy flag still set
					}
					return nil
				}, crew.WithMailbox(mb.make), crew.WithErrorHandler(func(error) {}))
				tellRounds(t, producers, rounds, func(v int) error { return ref.Tell(ctx, v) }, handled)
				ref.Stop()
				<-ref.Done()
				require.Zero(t, ref.DeadLetters())
			})
		})
	}
}

func TestRouterTellRacingRouteesGoingIdleLosesNoWakeUp(t *testing.T) {
	const producers, rounds = 3, 5000
	for _, c := range []struct {
		name string
		opts []crew.Option
	}{
		{"SmallestMailbox", nil},
		{"RoundRobin", []crew.Option{crew.WithStrategy(crew.RoundRobin())}},
		{"WithKey", []crew.Option{crew.WithKey(func(v int) int { return v % 4 })}},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				handled := make(chan int, producers)
				r := crew.SpawnRouter(ctx, 2, func(_ context.Context, v int) error {
					handled <- v
					return nil
				}, c.opts...)
				tellRounds(t, producers, rounds, func(v int) error { return r.Tell(ctx, v) }, handled)
				r.Stop()
				<-r.Done()
				require.Zero(t, r.DeadLetters())
			})
		})
	}
}
