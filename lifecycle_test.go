package crew_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sourcegraph/conc/panics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// The lifecycle of actors and routers: Drain, Stop, Done, and what a Tell
// after them returns.

func TestDrainHandlesWhatIsQueuedThenExits(t *testing.T) {
	var dead letters
	var mu sync.Mutex
	var handled []int
	started, release := make(chan struct{}), gateFor(t)
	ref := crew.Spawn(context.Background(), func(_ context.Context, v int) error {
		if v == 0 {
			close(started)
			<-release
		}
		mu.Lock()
		handled = append(handled, v)
		mu.Unlock()
		return nil
	}, crew.WithDeadLetters(dead.sink))
	for v := range 6 {
		require.NoError(t, ref.Tell(context.Background(), v))
	}
	<-started
	ref.Drain()
	assert.ErrorIs(t, ref.Tell(context.Background(), 6), crew.ErrStopped, "a draining actor takes no new message")
	select {
	case <-ref.Done():
		t.Fatal("Done closed before the queued messages were handled")
	default:
	}
	close(release)
	<-ref.Done()
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5}, handled, "every message queued before Drain was handled")
	assert.Equal(t, []int{6}, dead.messages(), "the one told after Drain is a dead letter")
}

func TestStopDuringDrainStopsAtOnce(t *testing.T) {
	var dead letters
	started, release := make(chan struct{}), gateFor(t)
	ref := crew.Spawn(context.Background(), func(_ context.Context, v int) error {
		if v == 0 {
			close(started)
			<-release
		}
		return nil
	}, crew.WithDeadLetters(dead.sink))
	for v := range 4 {
		require.NoError(t, ref.Tell(context.Background(), v))
	}
	<-started
	ref.Drain()
	ref.Stop()
	close(release)
	<-ref.Done()
	assert.Equal(t, []int{1, 2, 3}, dead.messages())
}

func TestRouterDoneClosesOnceEveryRouteeExited(t *testing.T) {
	started, release := make(chan struct{}), gateFor(t)
	r := crew.SpawnRouter(context.Background(), 3, func(context.Context, int) error { close(started); <-release; return nil })
	require.NoError(t, r.Tell(context.Background(), 1))
	<-started // a Stop before the routee took the message would make it a dead letter, and handle nothing
	r.Stop()
	select {
	case <-r.Done():
		t.Fatal("Done closed while a routee was still handling a message")
	default:
	}
	close(release)
	<-r.Done()
	for _, ref := range r.Routees() {
		select {
		case <-ref.Done():
		default:
			t.Fatalf("routee %s has not exited", ref.Name())
		}
	}
	<-crew.NewRouter[int](crew.RoundRobin()).Done() // no routee: done at once
}

func TestRouterDrainHandlesWhatIsQueued(t *testing.T) {
	var handled atomic.Int64
	release := gateFor(t)
	r := crew.SpawnRouter(context.Background(), 2, func(context.Context, int) error {
		<-release
		handled.Add(1)
		return nil
	})
	for v := range 10 {
		require.NoError(t, r.Tell(context.Background(), v))
	}
	r.Drain()
	assert.ErrorIs(t, r.Tell(context.Background(), 10), crew.ErrStopped)
	close(release)
	<-r.Done()
	assert.EqualValues(t, 10, handled.Load())
}

func TestARouterThatStoppedRefusesWithErrStopped(t *testing.T) {
	var dead letters
	r := crew.SpawnRouter(context.Background(), 2, func(context.Context, int) error { return nil }, crew.WithDeadLetters(dead.sink))
	r.Stop()
	<-r.Done()
	assert.ErrorIs(t, r.Tell(context.Background(), 1), crew.ErrStopped)
	assert.ErrorIs(t, r.Broadcast(context.Background(), 2), crew.ErrStopped)
	assert.Equal(t, []int{1, 2}, dead.messages(), "each refusal is recorded")

	// A router whose routees all stopped on their own has no routee left.
	own := crew.SpawnRouter(context.Background(), 2, func(context.Context, int) error { return nil })
	for _, ref := range own.Routees() {
		ref.Stop()
	}
	<-own.Done()
	assert.ErrorIs(t, own.Tell(context.Background(), 1), crew.ErrNoRoutee)
}

// Every message told is handled once, or refused with an error that says
// why (and recorded as a dead letter once, unless no routee is left), or
// becomes a dead letter once: never lost, never twice. Tells race Stop,
// Drain and the end of the routers' context, on fresh routers.
func TestEveryMessageToARouterIsHandledOrRefusedOnce(t *testing.T) {
	for round := range 40 {
		t.Run(fmt.Sprint("round ", round), func(t *testing.T) {
			const senders, each = 4, 200
			r := rand.New(rand.NewPCG(uint64(round), 7))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var seen [senders * each]atomic.Int32 // handled or dead-lettered
			var opts []crew.Option
			opts = append(opts, crew.WithDeadLetters(func(d crew.DeadLetter) {
				seen[d.Message.(int)].Add(1)
			}))
			if round%3 == 1 {
				opts = append(opts, crew.WithKey(func(v int) int { return v % 5 }))
			}
			router := crew.SpawnRouter(ctx, 3, func(_ context.Context, v int) error {
				seen[v].Add(1)
				return nil
			}, opts...)
			var nowhere [senders * each]atomic.Bool // refused with ErrNoRoutee
			var wg sync.WaitGroup
			for s := range senders {
				wg.Go(func() {
					for i := range each {
						v := s*each + i
						switch err := router.Tell(context.Background(), v); {
						case err == nil:
						case errors.Is(err, crew.ErrNoRoutee):
							nowhere[v].Store(true)
						case errors.Is(err, crew.ErrStopped): // recorded as a dead letter too
						default:
							t.Errorf("Tell(%d): %v", v, err)
						}
					}
				})
			}
			switch r.IntN(3) {
			case 0:
				router.Stop()
			case 1:
				router.Drain()
			default:
				cancel()
			}
			wg.Wait()
			router.Stop()
			<-router.Done()
			for v := range seen {
				want := int32(1)
				if nowhere[v].Load() {
					want = 0 // ErrNoRoutee: it went nowhere, and the error says so
				}
				if got := seen[v].Load(); got != want {
					t.Fatalf("message %d was handled or dead-lettered %d times, want %d", v, got, want)
				}
			}
		})
	}
}

// Errors a person reads in a log line: one line, one "crew:", naming what
// failed; what a program matches stays behind errors.Is and errors.As.
func TestErrorsReadAsOneLine(t *testing.T) {
	t.Run("a job's panic", func(t *testing.T) {
		p := crew.NewGroup(1)
		require.NoError(t, p.Submit(context.Background(), func(context.Context) error { explode(); return nil }))
		err := p.Wait()
		assert.EqualError(t, err, "crew: job panicked: kaboom")
		var rec *panics.ErrRecovered
		require.ErrorAs(t, err, &rec)
		assert.Contains(t, string(rec.Stack), "explode", "the stack is still there")
	})
	t.Run("a handler's panic", func(t *testing.T) {
		errs := make(chan error, 1)
		ref := crew.Spawn(context.Background(), func(context.Context, int) error { explode(); return nil },
			crew.WithName("a"), crew.WithErrorHandler(func(err error) { errs <- err }))
		require.NoError(t, ref.Tell(context.Background(), 1))
		err := <-errs
		assert.EqualError(t, err, `crew: actor "a": handler panicked: kaboom`)
		var rec *panics.ErrRecovered
		assert.ErrorAs(t, err, &rec)
		ref.Stop()
		<-ref.Done()
	})
	t.Run("a job's Goexit", func(t *testing.T) {
		p := crew.NewGroup(1, crew.WithName("p"))
		require.NoError(t, p.Submit(context.Background(), func(context.Context) error { runtime.Goexit(); return nil }))
		err := p.Wait()
		assert.EqualError(t, err, `crew: job called runtime.Goexit`)
		assert.Equal(t, 1, strings.Count(err.Error(), "crew:"))
	})
}
