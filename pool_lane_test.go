package crew_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// The scheduler's fast lane decides, for the common cases, what its
// general path decides: these tests hold it to the guarantees at the
// moments the lane hands over (a batch's job appears beside the pool's
// own, a Resize lowers the bound under a blocked Submit).

func TestThePoolsOwnJobsAndABatchsAreDispatchedInSubmissionOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// One worker, held: the pool's own jobs and a batch's queue in
		// turns, and must run in the order they were submitted, across
		// the two flows, once the worker is free.
		ctx := context.Background()
		var log runLog
		p := crew.NewGroup(1, crew.WithQueueSize(8))
		release := make(chan struct{})
		started := make(chan struct{})
		require.NoError(t, p.Submit(ctx, gated(started, release, nil)))
		<-started
		b, bctx := p.NewBatch(ctx)
		for i, name := range []string{"own 1", "batch 1", "own 2", "batch 2", "own 3", "own 4", "batch 3"} {
			if name[0] == 'o' {
				require.NoError(t, p.Submit(ctx, log.job(name)), i)
			} else {
				require.NoError(t, b.Submit(bctx, log.job(name)), i)
			}
		}
		close(release)
		require.NoError(t, b.Wait())
		require.NoError(t, p.Wait())
		assert.Equal(t, []string{"own 1", "batch 1", "own 2", "batch 2", "own 3", "own 4", "batch 3"}, log.get())
	})
}

func TestABlockedSubmitWaitsForRoomUnderABoundThatResizeLowered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Four workers, a bound of 8; the pool full, a Submit blocks. Resize
		// to one worker lowers the bound to 2: the blocked Submit is let in
		// only once fewer than 2 jobs are held, not as the first job ends.
		ctx := context.Background()
		p := crew.NewGroup(4, crew.WithQueueSize(1))
		release := make(chan struct{})
		for range 8 {
			require.NoError(t, p.Submit(ctx, gated(make(chan struct{}, 1), release, nil)))
		}
		blocked := inBackground(func() error { return p.Submit(ctx, func(context.Context) error { return nil }) })
		synctest.Wait()
		require.Equal(t, 1, crew.PoolBlocked(p))
		p.Resize(1)
		synctest.Wait()
		assert.Equal(t, 1, crew.PoolBlocked(p), "no room under the new bound")

		// Let the jobs end one at a time: each ends as the one worker left
		// runs it.
		ended := 0
		for ended < 8 && crew.PoolBlocked(p) == 1 {
			release <- struct{}{}
			ended++
			synctest.Wait()
		}
		assert.Equal(t, 7, ended, "let in once one job was held: %d ended", ended)
		close(release)
		require.NoError(t, <-blocked)
		require.NoError(t, p.Wait())
		assert.Equal(t, int64(9), p.Stats().Completed)
	})
}
