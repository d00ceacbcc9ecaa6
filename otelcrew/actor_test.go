package otelcrew_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

func TestAnActorsMessagesAndGaugesAreRecorded(t *testing.T) {
	m, reader := newMetrics(t)
	ctx := context.Background()
	started, release := make(chan struct{}), make(chan struct{})
	actor := crew.Spawn(ctx, func(_ context.Context, v int) error {
		switch v {
		case 0:
			close(started)
			<-release
		case 1:
			return errors.New("one")
		case 2:
			panic("two")
		}
		return nil
	}, crew.WithName("clerk"), crew.WithMetrics(m), crew.WithErrorHandler(func(error) {}),
		crew.WithDeadLetters(func(crew.DeadLetter) {}))
	for v := range 5 {
		require.NoError(t, actor.Tell(ctx, v))
	}
	<-started
	counts, levels := collect(t, reader).split("crew.actor=clerk")
	assert.Equal(t, actorLevels(4, 1, 1), levels, "the first message held, four behind it")
	assert.Equal(t, actorCounts(5, 0, 0, 0, 0, 0), counts)

	close(release)
	actor.Drain()
	<-actor.Done()
	require.ErrorIs(t, actor.Tell(ctx, 9), crew.ErrStopped)
	counts, levels = collect(t, reader).split("crew.actor=clerk")
	assert.Empty(t, levels, "the actor has exited: its gauges are gone")
	assert.Equal(t, actorCounts(5, 5, 2, 1, 1, 0), counts, "a Tell refused after the end is a dead letter")
}

// A router reports under its own name, with the actors' instruments: its
// routees add up. An actor reads busy for an instant as it looks at its
// mailbox, so the gauges are read once every routee waits, in a bubble.
func TestARoutersRouteesAddUpUnderItsName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, reader := newMetrics(t)
		ctx := context.Background()
		release := make(chan struct{})
		router := crew.SpawnRouter(ctx, 3, func(_ context.Context, v int) error {
			if v == 0 {
				<-release
			}
			return nil
		}, crew.WithName("fleet"), crew.WithMetrics(m), crew.WithStrategy(crew.RoundRobin()))
		synctest.Wait()
		_, levels := collect(t, reader).split("crew.actor=fleet")
		assert.Equal(t, actorLevels(0, 0, 3), levels, "three idle routees")

		require.NoError(t, router.Tell(ctx, 0))
		synctest.Wait()
		_, levels = collect(t, reader).split("crew.actor=fleet")
		assert.Equal(t, actorLevels(0, 1, 3), levels, "one routee holds a message")

		close(release)
		for v := 1; v < 30; v++ {
			require.NoError(t, router.Tell(ctx, v))
		}
		require.NoError(t, router.Broadcast(ctx, -1))
		router.Drain()
		<-router.Done()
		counts, levels := collect(t, reader).split("crew.actor=fleet")
		assert.Empty(t, levels, "every routee has exited")
		assert.Equal(t, actorCounts(33, 33, 0, 0, 0, 0), counts)
	})
}
