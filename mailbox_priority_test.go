package crew_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

type job struct {
	prio int // lower runs first
	id   int // arrival order
}

func byPrio(a, b job) bool { return a.prio < b.prio }

func TestPriorityHandsOutTheMostUrgentFirst(t *testing.T) {
	ctx := context.Background()
	p := crew.NewPriority(byValue)
	in := rand.New(rand.NewPCG(1, 2)).Perm(500)
	for _, v := range in {
		require.NoError(t, p.Enqueue(ctx, v))
	}
	out := drainAll[int](p)
	assert.True(t, slices.IsSorted(out))
	assert.Len(t, out, 500)
}

func TestStablePriorityKeepsArrivalOrderAmongEquals(t *testing.T) {
	ctx := context.Background()
	for name, p := range map[string]*crew.Priority[job]{
		"unbounded": crew.NewStablePriority(byPrio),
		"bounded":   crew.NewBoundedStablePriority(1000, byPrio),
	} {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			var want []job
			for id := range 1000 {
				j := job{prio: r.IntN(4), id: id}
				want = append(want, j)
				require.NoError(t, p.Enqueue(ctx, j))
			}
			slices.SortStableFunc(want, func(a, b job) int { return a.prio - b.prio })
			assert.Equal(t, want[:500], drainN(p, 500))
			assert.Equal(t, want[500:], p.Close(), "Close keeps the same order")
		})
	}
}

func TestBoundedPriorityRejectsWhenFull(t *testing.T) {
	ctx := context.Background()
	p := crew.NewBoundedPriority(2, byValue)
	assert.Equal(t, 2, p.Cap())
	require.NoError(t, p.Enqueue(ctx, 5))
	require.NoError(t, p.Enqueue(ctx, 1))
	assert.True(t, p.Full())
	assert.Equal(t, crew.ErrMailboxFull, p.Enqueue(ctx, 0))
	assert.Equal(t, []int{1, 5}, p.Close())

	u := crew.NewPriority(byValue)
	assert.Equal(t, 0, u.Cap())
	assert.False(t, u.Full(), "an unbounded Priority is never full")
}

func TestPriorityReleasesItsHeapWhenDrained(t *testing.T) {
	ctx := context.Background()
	p := crew.NewStablePriority(byValue)
	for i := range 1000 {
		require.NoError(t, p.Enqueue(ctx, i))
	}
	require.GreaterOrEqual(t, crew.PriorityCap(p), 1000)
	drainAll[int](p)
	assert.Zero(t, crew.PriorityCap(p))
	for i := range 10 {
		require.NoError(t, p.Enqueue(ctx, i))
	}
	drainAll[int](p)
	assert.Positive(t, crew.PriorityCap(p), "a small heap is kept for the next messages")
}

func TestPriorityConstructorsRejectBadInput(t *testing.T) {
	assert.PanicsWithValue(t, "crew: NewPriority: nil less function", func() { crew.NewPriority[int](nil) })
	assert.PanicsWithValue(t, "crew: NewStablePriority: nil less function", func() { crew.NewStablePriority[int](nil) })
	assert.PanicsWithValue(t, "crew: NewBoundedPriority: nil less function", func() { crew.NewBoundedPriority[int](1, nil) })
	assert.PanicsWithValue(t, "crew: NewBoundedStablePriority: nil less function", func() { crew.NewBoundedStablePriority[int](1, nil) })
	assert.PanicsWithValue(t, "crew: NewBoundedPriority: capacity must be at least 1, got 0", func() { crew.NewBoundedPriority(0, byValue) })
	assert.PanicsWithValue(t, "crew: NewBoundedStablePriority: capacity must be at least 1, got -1", func() { crew.NewBoundedStablePriority(-1, byValue) })
	// A capacity is a bound, not an allocation: the heap grows as it fills.
	assert.NoError(t, crew.NewBoundedPriority(math.MaxInt, byValue).Enqueue(context.Background(), 1))
	assert.NoError(t, crew.NewBoundedStablePriority(math.MaxInt, byValue).Enqueue(context.Background(), 1))
}

func TestPriorityStoresNothingWhenLessPanics(t *testing.T) {
	ctx := context.Background()
	boom := false
	p := crew.NewPriority(func(a, b int) bool {
		if boom {
			panic("less exploded")
		}
		return a < b
	})
	for _, v := range []int{5, 1, 3} {
		require.NoError(t, p.Enqueue(ctx, v))
	}
	boom = true
	assert.PanicsWithValue(t, "less exploded", func() { _ = p.Enqueue(ctx, 0) }, "the panic goes on to the caller")
	boom = false
	assert.Equal(t, 3, p.Len(), "the message that made less panic was not stored")
	for _, v := range []int{4, 2} {
		require.NoError(t, p.Enqueue(ctx, v))
	}
	assert.Equal(t, []int{1, 2, 3, 4, 5}, drainAll[int](p), "the heap is still valid")
}
