package crew_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// fill returns a Bounded of capacity 2 holding 1 and 2.
func fill(t *testing.T, overflow crew.Overflow) *crew.Bounded[int] {
	t.Helper()
	b := crew.NewBounded[int](2, overflow)
	require.NoError(t, b.Enqueue(context.Background(), 1))
	require.NoError(t, b.Enqueue(context.Background(), 2))
	require.True(t, b.Full())
	return b
}

func TestBoundedOverflowPolicies(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		overflow    crew.Overflow
		err         error // what Enqueue of 3 returns on the full mailbox
		kept        []int // what Close then returns
		evicted     []int // what the drop hook received
		dropped     int64
		description string
	}{
		{crew.Fail, crew.ErrMailboxFull, []int{1, 2}, nil, 0, "Fail rejects the new message and stores nothing"},
		{crew.DropNewest, crew.ErrDropped, []int{1, 2}, nil, 1, "DropNewest discards the new message and says so"},
		{crew.DropOldest, nil, []int{2, 3}, []int{1}, 1, "DropOldest evicts the oldest to the hook and accepts"},
		{crew.Backpressure, context.Canceled, []int{1, 2}, nil, 0, "Backpressure returns ctx.Err() when ctx ends first"},
	}
	for _, c := range cases {
		t.Run(c.description, func(t *testing.T) {
			b := fill(t, c.overflow)
			var evicted []int
			b.OnDrop(func(v int, reason error) {
				assert.ErrorIs(t, reason, crew.ErrEvicted)
				assert.ErrorIs(t, reason, crew.ErrMailboxFull)
				evicted = append(evicted, v)
			})
			err := b.Enqueue(canceled, 3)
			assert.Equal(t, c.err, err)
			assert.Equal(t, 2, b.Len())
			assert.Equal(t, c.dropped, b.Dropped())
			assert.Equal(t, c.evicted, evicted)
			assert.Equal(t, c.kept, b.Close())
		})
	}
}

func TestBoundedFullErrorsMatchErrMailboxFull(t *testing.T) {
	assert.ErrorIs(t, crew.ErrDropped, crew.ErrMailboxFull)
	assert.ErrorIs(t, crew.ErrEvicted, crew.ErrMailboxFull)
	assert.NotErrorIs(t, crew.ErrMailboxFull, crew.ErrDropped)
}

func TestBoundedDropOldestWithoutHookCounts(t *testing.T) {
	b := fill(t, crew.DropOldest)
	for v := 3; v <= 5; v++ {
		require.NoError(t, b.Enqueue(context.Background(), v))
	}
	assert.Equal(t, int64(3), b.Dropped())
	assert.Equal(t, []int{4, 5}, b.Close())
}

func TestBoundedDropHookMayUseTheMailbox(t *testing.T) {
	b := fill(t, crew.DropOldest)
	var lens []int
	b.OnDrop(func(int, error) { lens = append(lens, b.Len()) }) // would deadlock under the lock
	require.NoError(t, b.Enqueue(context.Background(), 3))
	assert.Equal(t, []int{2}, lens)
	b.OnDrop(nil)
	require.NoError(t, b.Enqueue(context.Background(), 4))
	assert.Equal(t, []int{2}, lens, "a removed hook is not called")
}

func TestNewBoundedRejectsBadInput(t *testing.T) {
	assert.PanicsWithValue(t, "crew: NewBounded: capacity must be between 1 and 16777216, got 0",
		func() { crew.NewBounded[int](0, crew.Fail) })
	assert.PanicsWithValue(t, "crew: NewBounded: capacity must be between 1 and 16777216, got -3",
		func() { crew.NewBounded[int](-3, crew.Backpressure) })
	assert.PanicsWithValue(t, "crew: NewBounded: capacity must be between 1 and 16777216, got 16777217",
		func() { crew.NewBounded[int](1<<24+1, crew.Backpressure) })
	assert.PanicsWithValue(t, fmt.Sprintf("crew: NewBounded: capacity must be between 1 and 16777216, got %d", math.MaxInt),
		func() { crew.NewBounded[int](math.MaxInt, crew.Backpressure) }, "a runtime error in makeslice before")
	assert.PanicsWithValue(t, "crew: NewBounded: unknown overflow policy Overflow(9)",
		func() { crew.NewBounded[int](1, crew.Overflow(9)) })
}

func TestOverflowString(t *testing.T) {
	assert.Equal(t, "Fail", crew.Fail.String())
	assert.Equal(t, "DropNewest", crew.DropNewest.String())
	assert.Equal(t, "DropOldest", crew.DropOldest.String())
	assert.Equal(t, "Backpressure", crew.Backpressure.String())
	assert.Equal(t, "Overflow(-1)", crew.Overflow(-1).String())
}

// blockSender starts a Backpressure Enqueue of v and returns once it is
// blocked behind the want-1 senders already waiting.
func blockSender(t *testing.T, ctx context.Context, b *crew.Bounded[int], v, want int) <-chan error {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- b.Enqueue(ctx, v) }()
	for crew.BoundedWaiters(b) < want {
		runtime.Gosched()
	}
	return errc
}

func TestBackpressureServesBlockedSendersInArrivalOrder(t *testing.T) {
	ctx := context.Background()
	b := crew.NewBounded[int](1, crew.Backpressure)
	require.NoError(t, b.Enqueue(ctx, 0))
	served := make(chan int, 5) // each sender reports its message once it is in
	for v := 1; v <= 5; v++ {
		go func() {
			if assert.NoError(t, b.Enqueue(ctx, v)) {
				served <- v
			}
		}()
		for crew.BoundedWaiters(b) < v {
			runtime.Gosched()
		}
	}
	for want := 0; want <= 5; want++ {
		v, ok := b.Dequeue()
		require.True(t, ok)
		require.Equal(t, want, v)
		if want < 5 {
			require.Equal(t, want+1, <-served, "the oldest waiter takes the freed slot")
			assert.Equal(t, 1, b.Len(), "the freed slot went straight to the waiter")
		}
	}
	assert.Equal(t, 0, b.Len())
}

// Two actors that tell each other through Backpressure mailboxes keep
// going while a slot is free anywhere: a blocked sender takes the slot a
// Dequeue frees at once, even if the consumer then blocks too (here, in
// its own Tell to the other actor). 33 messages circulate among 32 slots
// and 2 handlers. Senders let in only a batch of room at a time deadlock
// here.
func TestActorsTellingEachOtherThroughBackpressureMailboxesKeepGoing(t *testing.T) {
	ctx := context.Background()
	const messages, hops = 33, 2000
	var left atomic.Int64
	left.Store(messages)
	done := make(chan struct{})
	var a, b *crew.Ref[int]
	pass := func(other **crew.Ref[int]) func(context.Context, int) error {
		return func(_ context.Context, n int) error {
			if n == 0 {
				if left.Add(-1) == 0 {
					close(done)
				}
				return nil
			}
			return (*other).Tell(ctx, n-1)
		}
	}
	bounded := crew.WithMailbox(func() crew.Mailbox[int] { return crew.NewBounded[int](16, crew.Backpressure) })
	a = crew.Spawn(ctx, pass(&b), bounded)
	b = crew.Spawn(ctx, pass(&a), bounded)
	t.Cleanup(func() { a.Stop(); b.Stop(); <-a.Done(); <-b.Done() })
	go func() {
		for i := range messages {
			_ = []*crew.Ref[int]{a, b}[i%2].Tell(ctx, hops)
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // a deadlock; the test fails rather than hangs
		t.Fatalf("stuck: Len %d and %d, blocked senders %d and %d", a.Len(), b.Len(), crew.BoundedWaitersOf(a), crew.BoundedWaitersOf(b))
	}
}

func TestBackpressureNewcomerDoesNotOvertakeWaiters(t *testing.T) {
	ctx := context.Background()
	b := crew.NewBounded[int](1, crew.Backpressure)
	require.NoError(t, b.Enqueue(ctx, 0))
	first := blockSender(t, ctx, b, 1, 1)
	second := blockSender(t, ctx, b, 2, 2)
	_, _ = b.Dequeue()
	require.NoError(t, <-first)
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, b.Enqueue(canceled, 3), context.Canceled, "the mailbox is full again: 1 took the room")
	v, _ := b.Dequeue()
	require.Equal(t, 1, v)
	require.NoError(t, <-second)
	v, _ = b.Dequeue()
	assert.Equal(t, 2, v)
}

func TestBackpressureSenderLeavesWhenItsContextEnds(t *testing.T) {
	b := crew.NewBounded[int](1, crew.Backpressure)
	require.NoError(t, b.Enqueue(context.Background(), 0))
	ctx, cancel := context.WithCancel(context.Background())
	first := blockSender(t, ctx, b, 1, 1)
	second := blockSender(t, context.Background(), b, 2, 2)
	cancel()
	assert.ErrorIs(t, <-first, context.Canceled)
	require.Equal(t, 1, crew.BoundedWaiters(b), "the canceled sender withdrew; the other still waits")

	v, _ := b.Dequeue()
	assert.Equal(t, 0, v)
	require.NoError(t, <-second)
	assert.Equal(t, []int{2}, b.Close(), "the canceled message was never stored")
}

func TestBackpressureSenderReturnsDeadlineExceeded(t *testing.T) {
	b := crew.NewBounded[int](1, crew.Backpressure)
	require.NoError(t, b.Enqueue(context.Background(), 0))
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	assert.ErrorIs(t, b.Enqueue(ctx, 1), context.DeadlineExceeded)
}

func TestCloseWakesBlockedBackpressureSenders(t *testing.T) {
	ctx := context.Background()
	b := crew.NewBounded[int](2, crew.Backpressure)
	require.NoError(t, b.Enqueue(ctx, 0))
	require.NoError(t, b.Enqueue(ctx, 1))
	var senders []<-chan error
	for v := 2; v <= 4; v++ {
		senders = append(senders, blockSender(t, ctx, b, v, v-1))
	}
	assert.Equal(t, []int{0, 1}, b.Close(), "Close returns only what was accepted")
	for _, errc := range senders {
		assert.ErrorIs(t, <-errc, crew.ErrMailboxClosed)
	}
	assert.Equal(t, 0, crew.BoundedWaiters(b))
}

func TestBackpressureLosesNothingUnderCancellationAndClose(t *testing.T) {
	const producers, consumers, perProducer = 6, 2, 3000
	b := crew.NewBounded[int](4, crew.Backpressure)
	accepted := make([][]int, producers)
	halfway := make(chan struct{})
	var acceptedCount atomic.Int64
	var closed atomic.Bool
	var producing sync.WaitGroup

	for p := range producers {
		producing.Add(1)
		cancels := make(chan context.CancelFunc, 1)
		go func() { // cancels every other send while it may be blocked
			for cancel := range cancels {
				runtime.Gosched()
				cancel()
			}
		}()
		go func() {
			defer producing.Done()
			defer close(cancels)
			for i := range perProducer {
				v := p*perProducer + i
				ctx, cancel := context.WithCancel(context.Background())
				if i%2 == 0 {
					cancels <- cancel
				}
				err := b.Enqueue(ctx, v)
				cancel()
				switch {
				case err == nil:
					accepted[p] = append(accepted[p], v)
					if acceptedCount.Add(1) == producers*perProducer/4 {
						close(halfway)
					}
				case errors.Is(err, crew.ErrMailboxClosed):
					return
				default:
					assert.ErrorIs(t, err, context.Canceled)
				}
			}
		}()
	}
	consumed := startConsumers(b, consumers, &closed)
	<-halfway
	rest := b.Close()
	closed.Store(true)
	producing.Wait()

	require.Equal(t, sorted(accepted...), sorted(append(consumed(), rest)...),
		"every accepted message comes out exactly once, no other does")
	assert.Zero(t, crew.BoundedWaiters(b))
}
