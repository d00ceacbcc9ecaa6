package crew_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// Users who test their own code with testing/synctest run crew's pools,
// batches and actors inside a bubble: there, synctest.Wait returns only
// once every goroutine of the bubble is durably blocked, and the bubble's
// clock moves only then. So a pool's idle workers, its blocked Submits and
// its Waits must block on what synctest counts as durable (channels made
// in the bubble), never spin, poll or wait on a lock.

func TestAPoolABatchAndAnActorWorkInASynctestBubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		ctx := context.Background()
		sleep := func(d time.Duration) crew.Job {
			return func(context.Context) error { time.Sleep(d); return nil }
		}
		p := crew.NewGroup(2, crew.WithQueueSize(1)) // a bound of 4 jobs
		synctest.Wait()                              // the workers are idle, durably
		assert.Equal(t, 2, crew.PoolIdle(p))

		for range 4 { // two run, two wait in the backlog
			require.NoError(t, p.Submit(ctx, sleep(time.Second)))
		}
		submitted := make(chan error, 2)
		go func() { submitted <- p.Submit(ctx, sleep(time.Second)) }()
		synctest.Wait() // that Submit waits for room, durably
		assert.Equal(t, 1, crew.PoolBlocked(p))
		b, bctx := p.NewBatch(ctx)
		go func() { submitted <- b.Submit(bctx, sleep(time.Second)) }()
		synctest.Wait() // so does the batch's, behind it
		assert.Equal(t, 2, crew.PoolBlocked(p))
		assert.Equal(t, time.Duration(0), time.Since(start), "nothing waited for the clock yet")

		handled := make(chan int, 1)
		actor := crew.Spawn(ctx, func(_ context.Context, v int) error {
			time.Sleep(time.Duration(v) * time.Second)
			handled <- v
			return nil
		})
		require.NoError(t, actor.Tell(ctx, 3))
		synctest.Wait() // the actor handles its message: it sleeps, durably
		assert.True(t, actor.Busy())

		// The four jobs take two seconds on two workers; the two Submits
		// let in at the first second run in the third.
		require.NoError(t, <-submitted)
		require.NoError(t, <-submitted)
		require.NoError(t, b.Wait())
		assert.Equal(t, 3*time.Second, time.Since(start))
		require.NoError(t, p.Wait())
		assert.Equal(t, 3*time.Second, time.Since(start))
		s := p.Stats()
		assert.Equal(t, int64(6), s.Completed)
		assert.Equal(t, 3, <-handled)
		actor.Stop()
		<-actor.Done()
	})
}
