package crew_test

import (
	"context"
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

func TestNewChanRejectsCapacityBelowOne(t *testing.T) {
	assert.PanicsWithValue(t, "crew: NewChan: capacity must be at least 1, got 0", func() { crew.NewChan[int](0) })
}
