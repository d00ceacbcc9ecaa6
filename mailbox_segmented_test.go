package crew_test

import (
	"context"
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
	assert.Equal(t, 3*256, s.Cap(), "600 messages take three 256-slot segments")
	for i := range 300 {
		v, ok := s.Dequeue()
		require.True(t, ok)
		require.Equal(t, i, v)
	}
	assert.Equal(t, 2*256, s.Cap(), "the used-up head segment is unlinked")
	assert.Equal(t, 300, s.Len())
	for i := 300; i < 600; i++ {
		v, ok := s.Dequeue()
		require.True(t, ok)
		require.Equal(t, i, v)
	}
	assert.Equal(t, 0, s.Cap(), "a drained mailbox holds no segment")
	assert.Equal(t, 0, s.Len())
}

func TestSegmentedDrainedAtASegmentBoundaryHoldsNothing(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{255, 256, 257, 512} {
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
		assert.Equal(t, 0, s.Cap(), "drained after %d messages", n)
		require.NoError(t, s.Enqueue(ctx, n), "a drained mailbox takes new messages")
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
		require.Zero(t, s.Cap(), "round %d: a drained mailbox holds no segment", round)
	}
}
