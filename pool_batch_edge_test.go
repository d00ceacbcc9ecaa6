package crew_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// Edge cases of batches, Resize and Shutdown: the order in which a batch's
// Wait, the death of a worker and Shutdown meet.

func TestShutdownCancelsABatchWhoseWaitBegan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(2)
		b, _ := p.NewBatch(context.Background())
		started := make(chan struct{})
		require.NoError(t, b.Submit(context.Background(), func(ctx context.Context) error {
			close(started)
			<-ctx.Done() // ends only when the batch's context does
			return nil
		}))
		<-started
		waited := inBackground(b.Wait)
		synctest.Wait()
		require.True(t, crew.BatchClosed(b), "the batch's Wait has begun")

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		// Shutdown must cancel the batch whose Wait is waiting: if it hangs
		// instead, every goroutine of the bubble blocks and the test fails.
		assert.ErrorIs(t, p.Shutdown(ctx), context.Canceled)
		<-waited // the batch's Wait returns too
		assert.NoError(t, p.Wait(), "its job returned nil, and none was skipped")
	})
}

func TestAGoexitInABatchsOnlyWorkerSkipsItsJobsOverTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(1, crew.WithQueueSize(4))
		var dead letters
		b, _ := p.NewBatch(context.Background(), crew.WithLimit(1), crew.WithDeadLetters(dead.sink))
		started, release := make(chan struct{}), gateFor(t)
		require.NoError(t, b.Submit(context.Background(), func(context.Context) error {
			close(started)
			<-release
			runtime.Goexit()
			return nil
		}))
		<-started
		for range 2 {
			require.NoError(t, b.Submit(context.Background(), failsWith(nil))) // over the limit
		}
		waited := inBackground(b.Wait)
		synctest.Wait()
		require.True(t, crew.BatchClosed(b), "the batch's Wait has begun")
		close(release)

		// The Goexit fails the batch, which skips the jobs over its limit:
		// the goroutine that took the worker on dispatches them.
		assert.ErrorIs(t, <-waited, crew.ErrGoexit)
		s := b.Stats()
		assert.EqualValues(t, 2, s.Canceled)
		assert.Zero(t, s.Queued+s.Running)
		assert.Len(t, dead.get(), 2)
		assert.NoError(t, p.Wait())
		assert.EqualValues(t, 1, p.Stats().Replaced)
	})
}

func TestResizeCountsAWorkerWhoseGoroutineWasReplacedAsLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(2)
		started, release := make(chan int, 2), gateFor(t)
		job := func(ctx context.Context) error {
			i := crew.WorkerIndex(ctx)
			started <- i
			<-release
			if i == 1 {
				runtime.Goexit()
			}
			return nil
		}
		require.NoError(t, p.Submit(context.Background(), job))
		require.NoError(t, p.Submit(context.Background(), job))
		<-started
		<-started
		close(release)
		synctest.Wait()
		s := p.Stats()
		require.EqualValues(t, 1, s.Replaced)
		require.Zero(t, s.Running+s.Queued)
		require.Equal(t, 2, crew.PoolIdle(p))

		p.Resize(2) // two are live already: nothing to do
		p.Resize(3)
		meet := newMeeting(3)
		for range 3 {
			require.NoError(t, p.Submit(context.Background(), func(context.Context) error { meet.arrive(); return nil }))
		}
		synctest.Wait()
		assert.EqualValues(t, 3, meet.arrived.Load(), "three jobs running at once")
		assert.Equal(t, 3, p.Stats().Workers)
		assert.ErrorIs(t, p.Wait(), crew.ErrGoexit, "the Goexit is the pool's error")
	})
}

func TestWithLimitHoldsForAJobsOwnSubmitsOnAFullPool(t *testing.T) {
	p := crew.NewGroup(2, crew.WithQueueSize(1)) // a bound of 4 jobs
	b, _ := p.NewBatch(context.Background(), crew.WithLimit(1))
	var running highWater
	hold, release := make(chan struct{}), gateFor(t)
	var submitted atomic.Int64
	require.NoError(t, b.Submit(context.Background(), func(ctx context.Context) error {
		running.enter()
		defer running.exit()
		close(hold)
		<-release // the pool fills meanwhile
		for range 3 {
			if b.Submit(ctx, func(context.Context) error { running.enter(); running.exit(); return nil }) == nil {
				submitted.Add(1)
			}
		}
		return nil
	}))
	<-hold
	poolHold := make(chan struct{})
	poolStarted := make(chan struct{}, 1)
	require.NoError(t, p.Submit(context.Background(), gated(poolStarted, poolHold, nil)))
	<-poolStarted
	for range 2 { // the pool holds 4 jobs now: full
		require.NoError(t, p.Submit(context.Background(), failsWith(nil)))
	}
	close(release)
	require.NoError(t, b.Wait())
	close(poolHold)
	assert.EqualValues(t, 3, submitted.Load())
	assert.EqualValues(t, 1, running.max.Load(), "a job's own Submit on a full pool waits behind the limit, never runs inline beside its parent")
	assert.Zero(t, b.Stats().Inline)
	require.NoError(t, p.Wait())
}

func TestThePoolsWaitIgnoresJobsABatchSkipped(t *testing.T) {
	parent, cancel := context.WithCancelCause(context.Background())
	p := crew.NewGroup(1, crew.WithParent(parent))
	b, _ := p.NewBatch(context.Background())
	boom := errors.New("boom")
	started, release := make(chan struct{}, 1), gateFor(t)
	require.NoError(t, b.Submit(context.Background(), gated(started, release, boom)))
	<-started
	require.NoError(t, b.Submit(context.Background(), failsWith(nil))) // skipped after boom
	close(release)
	assert.ErrorIs(t, b.Wait(), boom)
	require.EqualValues(t, 1, b.Stats().Canceled)
	cancel(errors.New("the parent ended after every job of the pool ran"))
	assert.NoError(t, p.Wait(), "no job of the pool's own was skipped")
}

func TestInlineJobsStayCountedWhenAWorkerRetires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(2, crew.WithQueueSize(1)) // a bound of 4
		held := make(chan int, 2)
		release := [2]chan struct{}{gateFor(t), gateFor(t)}
		for range 2 {
			require.NoError(t, p.Submit(context.Background(), func(ctx context.Context) error {
				i := crew.WorkerIndex(ctx)
				held <- i
				<-release[i]
				if i == 1 {
					return p.Submit(ctx, failsWith(nil)) // the pool is full: inline
				}
				return nil
			}))
		}
		<-held
		<-held
		for range 2 { // fill the pool
			require.NoError(t, p.Submit(context.Background(), failsWith(nil)))
		}
		close(release[1]) // worker 1's job submits while worker 0's holds
		synctest.Wait()
		require.EqualValues(t, 1, p.Stats().Inline)
		close(release[0])
		synctest.Wait()
		before := p.Stats()
		require.Zero(t, before.Running+before.Queued)
		p.Resize(1)
		p.Resize(2) // a new worker in place of the retired one, whose jobs stay counted
		after := p.Stats()
		assert.Equal(t, before.Inline, after.Inline)
		assert.Equal(t, before.Completed, after.Completed)
		require.NoError(t, p.Wait())
	})
}

func TestShutdownOfADrainedPoolWithADoneContextReturnsNil(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 50 {
		assert.NoError(t, crew.NewGroup(1).Shutdown(ctx), "every job ended before ctx was looked at")
	}
}

func TestABatchsBlockedSubmitReturnsWhenTheBatchFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(1, crew.WithQueueSize(1)) // a bound of 2
		b, _ := p.NewBatch(context.Background())
		boom := errors.New("boom")
		started, release := make(chan struct{}, 1), gateFor(t)
		require.NoError(t, b.Submit(context.Background(), gated(started, release, boom)))
		<-started
		require.NoError(t, b.Submit(context.Background(), failsWith(nil))) // full now
		blocked := inBackground(func() error { return b.Submit(context.Background(), failsWith(nil)) })
		synctest.Wait()
		require.Equal(t, 1, crew.PoolBlocked(p))
		close(release)
		assert.ErrorIs(t, <-blocked, context.Canceled, "its batch's context ended: the job would not run")
		assert.ErrorIs(t, b.Wait(), boom)
		require.NoError(t, p.Wait())
	})
}
