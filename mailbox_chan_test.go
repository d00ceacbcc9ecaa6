package crew_test

import (
	"context"
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

func TestChanBlocksWhileFull(t *testing.T) {
	c := crew.NewChan[int](1)
	require.NoError(t, c.Enqueue(context.Background(), 1))
	assert.True(t, c.Full())

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, c.Enqueue(ctx, 2), context.Canceled, "a full Chan returns ctx.Err()")

	blocked := make(chan error)
	go func() { blocked <- c.Enqueue(context.Background(), 3) }()
	v, ok := c.Dequeue()
	require.True(t, ok)
	assert.Equal(t, 1, v)
	require.NoError(t, <-blocked, "the blocked sender gets the freed room")
	v, _ = c.Dequeue()
	assert.Equal(t, 3, v)
}

func TestChanCloseWakesBlockedSenders(t *testing.T) {
	c := crew.NewChan[int](1)
	require.NoError(t, c.Enqueue(context.Background(), 1))
	errs := make(chan error, 3)
	for i := range 3 {
		go func() { errs <- c.Enqueue(context.Background(), 10+i) }()
	}
	assert.Equal(t, []int{1}, c.Close())
	for range 3 {
		assert.ErrorIs(t, <-errs, crew.ErrMailboxClosed)
	}
}

// A channel's buffer is allocated whole: NewChan takes at most 1<<24 slots
// and refuses more with a crew: message that names the limit, not a
// runtime error from make.
func TestNewChanRejectsACapacityOutsideItsLimits(t *testing.T) {
	for _, n := range []int{0, -1, 1<<24 + 1, math.MaxInt} {
		assert.PanicsWithValue(t, "crew: NewChan: capacity must be between 1 and 16777216, got "+strconv.Itoa(n), func() { crew.NewChan[int](n) })
	}
}

// Close on a zero Chan returns nothing, as it does on the zero value of
// every other mailbox, rather than close a nil channel; Enqueue still
// names the constructor.
func TestAZeroMailboxClosesEmpty(t *testing.T) {
	for name, zero := range map[string]func() crew.Mailbox[int]{
		"Chan":      func() crew.Mailbox[int] { return new(crew.Chan[int]) },
		"Bounded":   func() crew.Mailbox[int] { return new(crew.Bounded[int]) },
		"Unbounded": func() crew.Mailbox[int] { return new(crew.Unbounded[int]) },
		"Segmented": func() crew.Mailbox[int] { return new(crew.Segmented[int]) },
		"Fair":      func() crew.Mailbox[int] { return new(crew.Fair[int, int]) },
		"Priority":  func() crew.Mailbox[int] { return new(crew.Priority[int]) },
	} {
		t.Run(name, func(t *testing.T) {
			mb := zero()
			require.NotPanics(t, func() { assert.Empty(t, mb.Close()) })
			assert.NotPanics(t, func() { assert.Empty(t, mb.Close()) }, "a second Close")
			_, ok := mb.Dequeue()
			assert.False(t, ok)
			assert.Zero(t, mb.Len())
		})
	}
	mustPanicWithCrew(t, "NewChan", func() { _ = new(crew.Chan[int]).Enqueue(context.Background(), 1) })
}
