package crew_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sourcegraph/conc/panics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

func TestActorHandlesMessagesInOrder(t *testing.T) {
	var got []int
	done := make(chan struct{})
	ref := crew.Spawn(context.Background(), func(_ context.Context, v int) error {
		got = append(got, v) // one message at a time: no lock needed
		if v == 99 {
			close(done)
		}
		return nil
	})
	for v := range 100 {
		require.NoError(t, ref.Tell(context.Background(), v))
	}
	<-done
	ref.Stop()
	<-ref.Done()
	for i, v := range got {
		require.Equal(t, i, v)
	}
	assert.Len(t, got, 100)
}

func TestStopFinishesTheCurrentMessageAndDeadLettersTheRest(t *testing.T) {
	var dead letters
	started, release := make(chan int, 10), gateFor(t)
	ref := crew.Spawn(context.Background(), func(_ context.Context, v int) error {
		started <- v
		<-release
		return nil
	}, crew.WithName("worker"), crew.WithDeadLetters(dead.sink))
	for v := range 3 {
		require.NoError(t, ref.Tell(context.Background(), v))
	}
	require.Equal(t, 0, <-started)
	assert.True(t, ref.Busy())
	assert.Equal(t, 2, ref.Len())

	ref.Stop()
	assert.True(t, ref.Stopped())
	assert.ErrorIs(t, ref.Tell(context.Background(), 3), crew.ErrStopped)
	close(release)
	<-ref.Done()

	assert.Equal(t, []int{1, 2, 3}, dead.messages(), "the two left queued, then the refused one")
	for _, d := range dead.get() {
		assert.Equal(t, "worker", d.Target)
		assert.ErrorIs(t, d.Reason, crew.ErrStopped)
	}
	assert.Equal(t, int64(3), ref.DeadLetters())
	assert.Len(t, started, 0, "only the message in flight was handled")
}

func TestActorStopsWhenItsContextEnds(t *testing.T) {
	var dead letters
	ctx, cancel := context.WithCancelCause(context.Background())
	started := make(chan struct{})
	ref := crew.Spawn(ctx, func(ctx context.Context, v int) error {
		close(started)
		<-ctx.Done() // the handler sees the actor's context
		return nil
	}, crew.WithDeadLetters(dead.sink))
	require.NoError(t, ref.Tell(context.Background(), 1))
	require.NoError(t, ref.Tell(context.Background(), 2))
	<-started
	cause := errors.New("shutting down")
	cancel(cause)
	<-ref.Done()
	require.Len(t, dead.get(), 1)
	assert.ErrorIs(t, dead.get()[0].Reason, cause, "leftovers carry the context's cause")
}

func TestPanicsAreRecoveredWithTheirStackAndTheActorGoesOn(t *testing.T) {
	errs := make(chan error, 2)
	handled := make(chan int, 2)
	ref := crew.Spawn(context.Background(), func(_ context.Context, v int) error {
		if v == 1 {
			panic("boom")
		}
		if v == 2 {
			return errors.New("plain failure")
		}
		handled <- v
		return nil
	}, crew.WithName("fragile"), crew.WithErrorHandler(func(err error) { errs <- err }))
	for v := 1; v <= 3; v++ {
		require.NoError(t, ref.Tell(context.Background(), v))
	}
	assert.Equal(t, 3, <-handled, "the actor survived the panic")

	err := <-errs
	var rec *panics.ErrRecovered
	require.ErrorAs(t, err, &rec)
	assert.Equal(t, "boom", rec.Value)
	assert.Contains(t, string(rec.Stack), "ref_test.go", "the stack points at the panicking handler")
	assert.Contains(t, err.Error(), `actor "fragile"`)
	assert.EqualError(t, <-errs, `crew: actor "fragile": plain failure`)

	ref.Stop()
	<-ref.Done()
}

func TestTellOnAFullMailboxIsADeadLetter(t *testing.T) {
	f := newFleet(t, 1, crew.WithMailbox(func() crew.Mailbox[int] {
		return crew.NewBounded[int](1, crew.Fail)
	}))
	f.fill(t, 0, 2) // one in flight, one queued: full
	ref := f.refs[0]
	assert.True(t, ref.Full())
	assert.ErrorIs(t, ref.Tell(context.Background(), 2), crew.ErrMailboxFull)
	require.Equal(t, []int{2}, f.dead.messages())
	assert.ErrorIs(t, f.dead.get()[0].Reason, crew.ErrMailboxFull)
	assert.Equal(t, "0", f.dead.get()[0].Target)
}

func TestEvictionsBecomeDeadLetters(t *testing.T) {
	f := newFleet(t, 1, crew.WithMailbox(func() crew.Mailbox[int] {
		return crew.NewBounded[int](2, crew.DropOldest)
	}))
	f.fill(t, 0, 5) // one in flight; of the four others, the two oldest are evicted
	assert.Equal(t, []int{1001, 1002}, f.dead.messages())
	assert.ErrorIs(t, f.dead.get()[0].Reason, crew.ErrEvicted)
	assert.Equal(t, 2, f.refs[0].Len())
}

// An actor never reads as idle and empty while a message it was told has
// not been handled: busy is set before the message leaves the mailbox.
func TestLenAndBusyNeverShowAnIdleActorMidHandoff(t *testing.T) {
	var handled atomic.Int64
	ref := crew.Spawn(context.Background(), func(context.Context, int) error {
		handled.Add(1)
		return nil
	})
	for round := range 2000 {
		require.NoError(t, ref.Tell(context.Background(), round))
		for handled.Load() <= int64(round) {
			idle := ref.Len() == 0 && !ref.Busy()
			if idle && handled.Load() <= int64(round) {
				t.Fatalf("round %d: the actor looked idle and empty before handling its message", round)
			}
		}
	}
	ref.Stop()
	<-ref.Done()
}

func TestForwardFeedsAnActorFromAChannel(t *testing.T) {
	in := make(chan string, 4)
	var got []string
	done := make(chan struct{})
	ref := crew.Spawn(context.Background(), func(_ context.Context, s string) error {
		got = append(got, s)
		if s == "c" {
			close(done)
		}
		return nil
	})
	in <- "a"
	in <- "b"
	in <- "c"
	close(in)
	require.NoError(t, crew.Forward(context.Background(), in, ref))
	<-done
	assert.Equal(t, []string{"a", "b", "c"}, got)

	ref.Stop()
	<-ref.Done()
	again := make(chan string, 1)
	again <- "late"
	assert.ErrorIs(t, crew.Forward(context.Background(), again, ref), crew.ErrStopped)
	assert.Equal(t, int64(1), ref.DeadLetters(), "the message that found it stopped is a dead letter")
}

func TestForwardStopsWhenItsContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ref := crew.Spawn(context.Background(), func(context.Context, int) error { return nil })
	defer func() {
		ref.Stop()
		<-ref.Done()
	}()
	errc := make(chan error)
	go func() { errc <- crew.Forward(ctx, make(chan int), ref) }()
	cancel()
	assert.ErrorIs(t, <-errc, context.Canceled)
}

func TestForwardThroughARouterWithoutRoutees(t *testing.T) {
	in := make(chan int, 1)
	in <- 1
	err := crew.Forward(context.Background(), in, crew.NewRouter[int](crew.RoundRobin()))
	assert.ErrorIs(t, err, crew.ErrNoRoutee)
}

// runtime.Goexit in a handler (t.FailNow in it does it) is the handler's
// failure, as a panic is: a new goroutine goes on with the next message.
func TestGoexitInAHandlerNeverStopsTheActor(t *testing.T) {
	var dead letters
	var errs []error // the error handler runs on the actor's goroutine, one call at a time
	var handled []int
	done := make(chan struct{})
	ref := crew.Spawn(context.Background(), func(_ context.Context, v int) error {
		if v == 1 {
			runtime.Goexit() // what t.FailNow does
		}
		handled = append(handled, v)
		if v == 3 {
			close(done)
		}
		return nil
	}, crew.WithName("a"), crew.WithDeadLetters(dead.sink), crew.WithErrorHandler(func(err error) { errs = append(errs, err) }))
	for v := range 4 {
		require.NoError(t, ref.Tell(context.Background(), v))
	}
	<-done
	assert.Equal(t, []int{0, 2, 3}, handled)
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], crew.ErrGoexit)
	assert.EqualError(t, errs[0], `crew: actor "a": handler called runtime.Goexit`)
	assert.False(t, ref.Stopped())
	ref.Stop()
	<-ref.Done()
	assert.Empty(t, dead.messages())
}

func TestAnActorWhoseContextEndsRefusesAtOnce(t *testing.T) {
	var dead letters
	ctx, cancel := context.WithCancel(context.Background())
	started, release := make(chan struct{}), gateFor(t)
	ref := crew.Spawn(ctx, func(context.Context, int) error {
		close(started)
		<-release // still handling when ctx ends
		return nil
	}, crew.WithDeadLetters(dead.sink))
	other := crew.Spawn(context.Background(), func(context.Context, int) error { return nil })
	require.NoError(t, ref.Tell(context.Background(), 0))
	<-started
	cancel()
	for !ref.Stopped() { // AfterFunc runs on a goroutine of its own
		runtime.Gosched()
	}
	assert.ErrorIs(t, ref.Tell(context.Background(), 1), crew.ErrStopped)
	router := crew.NewRouter(crew.RoundRobin(), ref, other)
	for v := range 4 {
		require.NoError(t, router.Tell(context.Background(), 10+v), "the router skips the stopping actor")
	}
	assert.Equal(t, []int{1}, dead.messages())
	close(release)
	<-ref.Done()
	assert.False(t, ref.Busy())
	other.Stop()
	<-other.Done()
}

func TestStopWakesAHandlerBlockedOnItsOwnFullMailbox(t *testing.T) {
	started, filled := make(chan struct{}), make(chan struct{})
	var self *crew.Ref[int]
	errc := make(chan error, 1)
	self = crew.Spawn(context.Background(), func(ctx context.Context, v int) error {
		if v == 0 {
			close(started)
			<-filled
			errc <- self.Tell(context.Background(), 99) // its own mailbox is full: blocks
		}
		return nil
	}, crew.WithMailbox(func() crew.Mailbox[int] { return crew.NewBounded[int](1, crew.Backpressure) }))
	require.NoError(t, self.Tell(context.Background(), 0))
	<-started
	require.NoError(t, self.Tell(context.Background(), 1)) // fills the mailbox
	close(filled)
	for crew.BoundedWaitersOf(self) == 0 {
		runtime.Gosched()
	}
	self.Stop() // would deadlock if Stop waited for the handler to return
	assert.ErrorIs(t, <-errc, crew.ErrStopped)
	<-self.Done()
}

func TestSpawnRejectsBadInput(t *testing.T) {
	handle := func(context.Context, int) error { return nil }
	assert.PanicsWithValue(t, "crew: Spawn: nil handler", func() {
		crew.Spawn[int](context.Background(), nil)
	})
	assert.PanicsWithValue(t, "crew: Spawn: nil context", func() {
		//lint:ignore SA1012 the nil context is the point
		crew.Spawn(nil, handle)
	})
	assert.PanicsWithValue(t,
		"crew: WithMailbox: a func() crew.Mailbox[string] does not make mailboxes for int messages",
		func() {
			crew.Spawn(context.Background(), handle, crew.WithMailbox(func() crew.Mailbox[string] {
				return crew.NewUnbounded[string]()
			}))
		})
	assert.Panics(t, func() { crew.WithDeadLetters(nil) })
	assert.Panics(t, func() { crew.WithErrorHandler(nil) })
}

func TestDeadLetterString(t *testing.T) {
	d := crew.DeadLetter{Message: 7, Target: "w", Reason: crew.ErrStopped}
	assert.Equal(t, `dead letter to "w": crew: actor stopped (message 7)`, d.String())
	assert.True(t, strings.HasPrefix(fmt.Sprint(d), "dead letter"))
}

func TestTellAndRouteDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are checked without the race detector")
	}
	handled := make(chan struct{})
	handle := func(context.Context, int) error {
		handled <- struct{}{}
		return nil
	}
	ref := crew.Spawn(context.Background(), handle)
	router := crew.SpawnRouter(context.Background(), 4, handle)
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		_ = ref.Tell(ctx, 1)
		<-handled
	}), "Ref.Tell and handling")
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		_ = router.Tell(ctx, 1)
		<-handled
	}), "Router.Tell with SmallestMailbox and handling")
	// Keyed routers, each message of a new key: the key's record and its
	// placement (WithConsistentHash ranks the routees by the key's hash)
	// allocate nothing either.
	key := func(n int) int { return n }
	keyed := map[string]*crew.Router[int]{
		"WithKey":            crew.SpawnRouter(context.Background(), 4, handle, crew.WithKey(key)),
		"WithConsistentHash": crew.SpawnRouter(context.Background(), 4, handle, crew.WithConsistentHash(key)),
	}
	for name, kr := range keyed {
		n := 0
		assert.Zero(t, testing.AllocsPerRun(1000, func() {
			n++
			_ = kr.Tell(ctx, n)
			<-handled
		}), "Router.Tell %s, a new key each time, and handling", name)
	}
	ref.Stop()
	router.Stop()
	<-ref.Done()
	for _, r := range append([]*crew.Router[int]{router}, keyed["WithKey"], keyed["WithConsistentHash"]) {
		r.Stop()
		<-r.Done()
	}
}

// heapPer reports the heap bytes that each of n calls to start keeps.
func heapPer(n int, start func(i int)) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		start(i)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	return (after.HeapAlloc - before.HeapAlloc) / uint64(n)
}

func TestAnIdleActorCostsAGoroutinePlusLessThanOneKiB(t *testing.T) {
	const n = 10000
	block := make(chan struct{})
	defer close(block)
	// Use up the runtime's free goroutine records first, so that the bare
	// goroutines and the actors measured next all get new ones.
	for range n {
		go func() { <-block }()
	}
	goroutine := heapPer(n, func(int) { go func() { <-block }() })

	refs := make([]*crew.Ref[int], n)
	actor := heapPer(n, func(i int) {
		refs[i] = crew.Spawn(context.Background(), func(context.Context, int) error { return nil })
	})
	for _, r := range refs {
		r.Stop()
		<-r.Done()
	}
	t.Logf("an idle actor keeps %d heap bytes, a blocked goroutine %d", actor, goroutine)
	assert.Less(t, actor, goroutine+1024)
}
