package crew_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

func TestSegmentedLinksAndRecyclesSegments(t *testing.T) {
	ctx := context.Background()
	s := crew.NewSegmented[int]()
	assert.Equal(t, 0, s.Cap())
	for i := range 600 {
		require.NoError(t, s.Enqueue(ctx, i))
	}
	assert.Equal(t, 32+3*256, s.Cap(), "600 messages take the 32-slot first segment and three 256-slot ones")
	for i := range 300 {
		v, ok := s.Dequeue()
		require.True(t, ok)
		require.Equal(t, i, v)
	}
	assert.Equal(t, 2*256, s.Cap(), "the used-up segments are unlinked")
	assert.Equal(t, 300, s.Len())
	for i := 300; i < 600; i++ {
		v, ok := s.Dequeue()
		require.True(t, ok)
		require.Equal(t, i, v)
	}
	assert.Equal(t, 0, s.Len())
	_, ok := s.Dequeue() // an idle actor looks once more before it sleeps
	require.False(t, ok)
	assert.Equal(t, 0, s.Cap(), "a drained mailbox gives its linked segments back once a Dequeue finds it empty")
}

// A drained mailbox keeps its first segment, and only that: drained in a
// linked segment, it holds none, and its next message takes a first one.
func TestSegmentedDrainedAtASegmentBoundary(t *testing.T) {
	ctx := context.Background()
	for n, held := range map[int]int{1: 32, 15: 32, 16: 32, 31: 32, 32: 32, 33: 0, 287: 0, 288: 0, 289: 0, 544: 0} {
		s := crew.NewSegmented[int]()
		for i := range n {
			require.NoError(t, s.Enqueue(ctx, i))
		}
		for i := range n {
			v, ok := s.Dequeue()
			require.True(t, ok)
			require.Equal(t, i, v)
		}
		_, ok := s.Dequeue()
		assert.False(t, ok)
		assert.Equal(t, held, s.Cap(), "drained after %d messages", n)
		require.NoError(t, s.Enqueue(ctx, n), "a drained mailbox takes new messages")
		assert.Equal(t, 32, s.Cap(), "after %d messages and one more", n)
		v, _ := s.Dequeue()
		assert.Equal(t, n, v)
	}
}

func TestSegmentedCloseAcrossSegments(t *testing.T) {
	ctx := context.Background()
	s := crew.NewSegmented[int]()
	for i := range 700 {
		require.NoError(t, s.Enqueue(ctx, i))
	}
	for range 100 {
		_, _ = s.Dequeue()
	}
	rest := s.Close()
	require.Len(t, rest, 600)
	for i, v := range rest {
		require.Equal(t, 100+i, v)
	}
	assert.Equal(t, 0, s.Cap())
}

func TestSegmentedDoesNotKeepDequeuedMessagesReachable(t *testing.T) {
	ctx := context.Background()
	s := crew.NewSegmented[*int]()
	for i := range 10 {
		require.NoError(t, s.Enqueue(ctx, &i))
	}
	for range 9 {
		_, _ = s.Dequeue()
	}
	// One segment is still linked; the nine dequeued slots must be nil.
	rest := s.Close()
	require.Len(t, rest, 1)
	assert.Equal(t, 9, *rest[0])
}

func TestSegmentedReleasesItsSegmentEvenWhenCapRacesTheDrain(t *testing.T) {
	ctx := context.Background()
	s := crew.NewSegmented[int]()
	for round := range 2000 {
		require.NoError(t, s.Enqueue(ctx, round))
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range 3 {
				_ = s.Cap()
			}
		}()
		_, ok := s.Dequeue()
		require.True(t, ok)
		<-done
		_, ok = s.Dequeue() // an idle actor looks once more before it sleeps
		require.False(t, ok)
		require.Equal(t, 32, s.Cap(), "round %d: a drained mailbox keeps its first segment", round)
	}
}

// Sparse traffic, a mailbox drained after every few messages as an idle
// actor's is, runs through the first segment the mailbox keeps, rebased to
// the next ticket once half of it is used, and never takes another.
func TestSegmentedSparseTrafficKeepsItsFirstSegment(t *testing.T) {
	ctx := context.Background()
	s := crew.NewSegmented[int]()
	next, want := 0, 0
	for round := range 1000 {
		for range 1 + round%5 {
			require.NoError(t, s.Enqueue(ctx, next))
			next++
		}
		require.Equal(t, 32, s.Cap(), "round %d", round)
		for {
			v, ok := s.Dequeue()
			if !ok {
				break
			}
			require.Equal(t, want, v, "round %d", round)
			want++
		}
		require.Equal(t, next, want, "round %d: drained", round)
		require.Equal(t, 32, s.Cap(), "round %d: drained, it keeps its first segment", round)
	}
}

// Producers race the consumer's rebase of the first segment: each sends in
// short bursts, the consumer drains the mailbox to empty between them, and
// every message comes out once, in its producer's order.
func TestSegmentedRebaseRacesProducers(t *testing.T) {
	const producers, perProducer = 4, 20000
	ctx := context.Background()
	s := crew.NewSegmented[int]()
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range perProducer {
				if !assert.NoError(t, s.Enqueue(ctx, p*perProducer+i)) {
					return
				}
				if i%3 == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	last := make([]int, producers)
	for p := range last {
		last[p] = p*perProducer - 1
	}
	for got := 0; got < producers*perProducer; {
		v, ok := s.Dequeue()
		if !ok {
			runtime.Gosched()
			continue
		}
		p := v / perProducer
		require.Equal(t, last[p]+1, v, "producer %d's messages in order, once each", p)
		last[p] = v
		got++
	}
	wg.Wait()
	_, ok := s.Dequeue()
	assert.False(t, ok)
	assert.LessOrEqual(t, s.Cap(), 32)
}

// Many producers, one consumer that checks Len against what it knows
// between its Dequeues, and a Close at a random point: every accepted
// message comes out once, in its producer's order, and Len stays between
// the messages accepted and those begun. Three mailboxes at once share
// the process-wide pool of segments.
func TestSegmentedFanInCloseAndLenStress(t *testing.T) {
	const mailboxes, producers, rounds = 3, 6, 20
	var wg sync.WaitGroup
	for m := range mailboxes {
		wg.Go(func() {
			for round := range rounds {
				fanInRound(t, uint64(m*rounds+round), producers)
			}
		})
	}
	wg.Wait()
}

func fanInRound(t *testing.T, seed uint64, producers int) {
	ctx := context.Background()
	s := crew.NewSegmented[int64]()
	closeAt := 500 + int(seed*7919%3000)
	var begun, accepted atomic.Int64
	acceptedBy := make([][]int64, producers)
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := int64(0); ; i++ {
				v := int64(p)<<32 | i
				begun.Add(1)
				err := s.Enqueue(ctx, v)
				if errors.Is(err, crew.ErrMailboxClosed) {
					return
				}
				if !assert.NoError(t, err) {
					return
				}
				acceptedBy[p] = append(acceptedBy[p], v)
				accepted.Add(1)
			}
		})
	}
	var got []int64
	for len(got) < closeAt {
		low := accepted.Load() - int64(len(got))
		n := int64(s.Len())
		high := begun.Load() - int64(len(got))
		if n < low || n > high {
			t.Errorf("Len %d outside [%d, %d]", n, low, high)
			break
		}
		if v, ok := s.Dequeue(); ok {
			got = append(got, v)
		}
	}
	rest := s.Close()
	wg.Wait()
	assert.Equal(t, 0, s.Len())
	out := append(got, rest...)
	var in int
	for p, mine := range acceptedBy {
		in += len(mine)
		var order []int64
		for _, v := range out {
			if v>>32 == int64(p) {
				order = append(order, v)
			}
		}
		assert.Equal(t, mine, order, "producer %d: accepted messages come out once, in order", p)
	}
	assert.Len(t, out, in)
}

// An Enqueue that has taken its ticket has put its message in the mailbox:
// Len counts it at once, and a Dequeue (or a Close) waits for its write
// rather than report the mailbox empty, which would contradict Len.
func TestSegmentedWaitsForAnEnqueueBetweenItsTicketAndItsWrite(t *testing.T) {
	for _, closing := range []bool{false, true} {
		s := crew.NewSegmented[int]()
		require.NoError(t, s.Enqueue(context.Background(), 1))
		write := crew.SegmentedClaim(s)
		assert.Equal(t, 2, s.Len(), "the message whose write is pending is counted")
		v, ok := s.Dequeue()
		require.True(t, ok)
		require.Equal(t, 1, v)

		waiting := make(chan struct{})
		undo := crew.OnSegmentedWait(func() { close(waiting) })
		type result struct {
			v    int
			ok   bool
			rest []int
		}
		got := make(chan result, 1)
		go func() {
			if closing {
				got <- result{rest: s.Close()}
				return
			}
			v, ok := s.Dequeue()
			got <- result{v: v, ok: ok}
		}()
		select {
		case <-waiting:
		case r := <-got:
			t.Fatalf("closing %v: returned %+v before the pending write", closing, r)
		}
		write(2)
		r := <-got
		undo()
		if closing {
			assert.Equal(t, []int{2}, r.rest)
		} else {
			assert.Equal(t, result{v: 2, ok: true}, r)
		}
		assert.Equal(t, 0, s.Len())
	}
}

// Several consumers share a Segmented, as producers drain it to empty and
// refill it over and over (its last segment released and taken again each
// time), with other mailboxes of the same type taking segments from the
// same pool: every message comes out exactly once, and Len stays between 0
// and the number of messages not yet taken.
func TestSegmentedManyConsumersAndDrainsToEmpty(t *testing.T) {
	const mailboxes, producers, consumers, perProducer = 3, 4, 3, 3000
	var wg sync.WaitGroup
	for range mailboxes {
		wg.Go(func() {
			ctx := context.Background()
			s := crew.NewSegmented[int]()
			var sent, taken atomic.Int64
			seen := make([]atomic.Int32, producers*perProducer)
			var pw sync.WaitGroup
			for p := range producers {
				pw.Go(func() {
					for i := range perProducer {
						if !assert.NoError(t, s.Enqueue(ctx, p*perProducer+i)) {
							return
						}
						sent.Add(1)
						if i%7 == 0 {
							runtime.Gosched() // let the consumers drain it
						}
					}
				})
			}
			var cw sync.WaitGroup
			for range consumers {
				cw.Go(func() {
					for taken.Load() < producers*perProducer {
						before := taken.Load()
						if n := s.Len(); n < 0 || int64(n) > producers*perProducer-before {
							t.Errorf("Len %d, with %d taken", n, before)
							return
						}
						if v, ok := s.Dequeue(); ok {
							seen[v].Add(1)
							taken.Add(1)
						} else {
							runtime.Gosched()
						}
					}
				})
			}
			pw.Wait()
			cw.Wait()
			for v := range seen {
				if n := seen[v].Load(); n != 1 {
					t.Errorf("message %d came out %d times", v, n)
				}
			}
			_, ok := s.Dequeue()
			assert.False(t, ok)
			assert.LessOrEqual(t, s.Cap(), 32, "drained, and found empty: no more than a first segment held")
			assert.Empty(t, s.Close())
		})
	}
	wg.Wait()
}
