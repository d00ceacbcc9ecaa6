package crew_test

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/crewlib/crew"
)

// Misuse and panicking callbacks: each panics to its caller with a crew:
// message (or the callback's own panic), and leaves crew consistent: no
// lock held, no count off, no goroutine started.

func nop[T any](context.Context, T) error { return nil }

func TestANilContextPanicsWithACrewMessage(t *testing.T) {
	ref := crew.Spawn(context.Background(), nop[int])
	defer func() { ref.Stop(); <-ref.Done() }()
	router := crew.SpawnRouter(context.Background(), 2, nop[int])
	defer func() {
		router.Stop()
		for _, r := range router.Routees() {
			<-r.Done()
		}
	}()
	pool := crew.NewPool(1, nop[int])
	defer pool.Wait()
	batch, _ := pool.NewBatch(context.Background())
	defer batch.Wait()
	var none context.Context // nil
	for name, f := range map[string]func(){
		"Ref.Tell":         func() { _ = ref.Tell(none, 1) },
		"Router.Tell":      func() { _ = router.Tell(none, 1) },
		"Router.Broadcast": func() { _ = router.Broadcast(none, 1) },
		"Forward":          func() { _ = crew.Forward(none, make(chan int), crew.Teller[int](ref)) },
		"Spawn":            func() { crew.Spawn(none, nop[int]) },
		"SpawnRouter":      func() { crew.SpawnRouter(none, 1, nop[int]) },
		"Pool.Submit":      func() { _ = pool.Submit(none, 1) },
		"Pool.NewBatch":    func() { pool.NewBatch(none) },
		"Batch.Submit":     func() { _ = batch.Submit(none, 1) },
		"Chan.Enqueue":     func() { _ = crew.NewChan[int](1).Enqueue(none, 1) },
		"a full Bounded Backpressure's Enqueue": func() {
			b := crew.NewBounded[int](1, crew.Backpressure)
			require.NoError(t, b.Enqueue(context.Background(), 1))
			_ = b.Enqueue(none, 2)
		},
	} {
		t.Run(name, func(t *testing.T) { panicsWithCrewPrefix(t, f) })
	}
}

func TestABackpressureMailboxStaysUsableAfterANilContext(t *testing.T) {
	b := crew.NewBounded[int](1, crew.Backpressure)
	require.NoError(t, b.Enqueue(context.Background(), 1))
	var none context.Context
	panicsWithCrewPrefix(t, func() { _ = b.Enqueue(none, 2) })
	closed := make(chan []int, 1)
	go func() { closed <- b.Close() }()
	select {
	case rest := <-closed:
		assert.Equal(t, []int{1}, rest)
	case <-time.After(batchPatience): // turns a hang into a failure; orders nothing
		t.Fatal("Close hangs: the nil context left the mailbox locked")
	}
}

func TestAFactoryThatMakesNoMailboxPanicsInTheConstructor(t *testing.T) {
	ignore := goleak.IgnoreCurrent() // the goroutines of earlier tests are theirs
	for name, factory := range map[string]func() crew.Mailbox[int]{
		"nil":       func() crew.Mailbox[int] { return nil },
		"typed nil": func() crew.Mailbox[int] { return (*crew.Bounded[int])(nil) },
	} {
		t.Run("Spawn, "+name, func(t *testing.T) {
			panicsWithCrewPrefix(t, func() { crew.Spawn(context.Background(), nop[int], crew.WithMailbox(factory)) })
		})
		t.Run("SpawnRouter, "+name, func(t *testing.T) {
			panicsWithCrewPrefix(t, func() { crew.SpawnRouter(context.Background(), 2, nop[int], crew.WithMailbox(factory)) })
		})
		t.Run("NewPool, "+name, func(t *testing.T) {
			panicsWithCrewPrefix(t, func() { crew.NewPool(2, nop[int], crew.WithMailbox(factory)) })
		})
	}
	goleak.VerifyNone(t, ignore)
}

func TestSpawnRouterStartsNoRouteeWhenTheFactoryFails(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	made := 0
	assert.PanicsWithValue(t, "the second mailbox", func() {
		crew.SpawnRouter(context.Background(), 3, nop[int], crew.WithMailbox(func() crew.Mailbox[int] {
			if made++; made == 2 {
				panic("the second mailbox")
			}
			return crew.NewUnbounded[int]()
		}))
	})
	goleak.VerifyNone(t, ignore)
}

func TestAPanickingEnqueueLeavesTheActorsLoadExact(t *testing.T) {
	for name, factory := range map[string]func() crew.Mailbox[float64]{
		"Fair, a NaN key": func() crew.Mailbox[float64] { return crew.NewFair(func(f float64) float64 { return f }) },
		"Priority, less panics": func() crew.Mailbox[float64] {
			return crew.NewPriority(func(a, b float64) bool {
				if math.IsNaN(a) || math.IsNaN(b) {
					panic("less: NaN")
				}
				return a < b
			})
		},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := gateFor(t)
				ref := crew.Spawn(context.Background(), func(_ context.Context, f float64) error {
					if f == 1 {
						<-release
					}
					return nil
				}, crew.WithMailbox(factory))
				defer func() { ref.Stop(); <-ref.Done() }()
				require.NoError(t, ref.Tell(context.Background(), 1))
				synctest.Wait()
				require.True(t, ref.Busy(), "1 is being handled")
				require.Zero(t, ref.Len())
				require.NoError(t, ref.Tell(context.Background(), 2)) // queued: less has one to compare with
				assert.Panics(t, func() { _ = ref.Tell(context.Background(), math.NaN()) })
				assert.EqualValues(t, 2, crew.RefLoad(ref), "the message the mailbox refused by panicking is not counted")
				close(release)
				synctest.Wait()
				assert.Zero(t, crew.RefLoad(ref), "every message was handled")
			})
		})
	}
}

func TestAPanickingCallbackLeavesAPoolUsable(t *testing.T) {
	type job struct{ key any }
	t.Run("a key function that panics", func(t *testing.T) {
		p := crew.NewPool(2, nop[job], crew.WithKey(func(j job) any { return j.key }))
		assert.Panics(t, func() { _ = p.Submit(context.Background(), job{key: []int{1}}) }, "a slice key cannot be hashed")
		for i := range 10 {
			require.NoError(t, p.Submit(context.Background(), job{key: i % 3}))
		}
		require.NoError(t, p.Wait())
		assert.EqualValues(t, 10, p.Stats().Completed)
	})
	t.Run("a backlog whose Enqueue panics", func(t *testing.T) {
		started, release := make(chan struct{}), gateFor(t)
		p := crew.NewPool(1, func(_ context.Context, f float64) error {
			if f == 1 {
				close(started)
				<-release
			}
			return nil
		}, crew.WithMailbox(func() crew.Mailbox[float64] {
			return crew.NewFair(func(f float64) float64 { return f })
		}))
		require.NoError(t, p.Submit(context.Background(), 1))
		<-started // the worker is busy: the next job goes through the backlog
		assert.Panics(t, func() { _ = p.Submit(context.Background(), math.NaN()) })
		close(release)
		require.NoError(t, p.Submit(context.Background(), 2))
		require.NoError(t, p.Wait(), "Wait returns: no job is counted that was never held")
		s := p.Stats()
		assert.EqualValues(t, 2, s.Submitted)
		assert.Zero(t, s.Running+s.Queued)
	})
	t.Run("a keyed router's key function that panics", func(t *testing.T) {
		r := crew.SpawnRouter(context.Background(), 2, nop[job], crew.WithKey(func(j job) any { return j.key }))
		assert.Panics(t, func() { _ = r.Tell(context.Background(), job{key: []int{1}}) })
		require.NoError(t, r.Tell(context.Background(), job{key: 1}))
		r.Stop()
		for _, ref := range r.Routees() {
			<-ref.Done()
		}
	})
}

// customContext is a context of a type of the user's: deriving from it
// starts a goroutine that watches its Done channel until the child ends.
type customContext struct {
	context.Context
	done chan struct{}
}

func (c customContext) Done() <-chan struct{} { return c.done }

func TestAConstructorThatPanicsStartsNothing(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	parent := customContext{Context: context.Background(), done: make(chan struct{})}
	type job struct{}
	panicsWithCrewPrefix(t, func() {
		crew.NewPool(2, nop[job], crew.WithParent(parent), crew.WithKey(func(s string) string { return s }))
	})
	panicsWithCrewPrefix(t, func() {
		crew.NewPool(2, nop[job], crew.WithParent(parent), crew.WithMailbox(func() crew.Mailbox[job] { return nil }))
	})
	goleak.VerifyNone(t, ignore)
}
