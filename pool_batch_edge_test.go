package crew_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// Edge cases of batches, Resize and Shutdown: the order in which a batch's
// Wait, the death of a worker and Shutdown meet.

func TestShutdownCancelsABatchWhoseWaitBegan(t *testing.T) {
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
	until(t, func() bool { return crew.BatchClosed(b) })

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err, ok := returnsWithin(t, inBackground(func() error { return p.Shutdown(ctx) }), "Shutdown")
	require.True(t, ok, "Shutdown must cancel the batch whose Wait is waiting")
	assert.ErrorIs(t, err, context.Canceled)
	_, ok = returnsWithin(t, waited, "the batch's Wait")
	assert.True(t, ok)
}

func TestTheLastWorkerDyingDropsJobsOverTheLimitOfAWaitingBatch(t *testing.T) {
	p := crew.NewGroup(1, crew.WithQueueSize(4))
	b, _ := p.NewBatch(context.Background(), crew.WithLimit(1), crew.WithDeadLetters(func(crew.DeadLetter) {}))
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
	until(t, func() bool { return crew.BatchClosed(b) })
	close(release)

	err, ok := returnsWithin(t, waited, "the batch's Wait")
	require.True(t, ok, "the jobs over the limit must become dead letters when no worker is left")
	assert.Error(t, err)
	s := b.Stats()
	assert.EqualValues(t, 2, s.Dropped)
	assert.Zero(t, s.Queued+s.Running)
	_, ok = returnsWithin(t, inBackground(p.Wait), "the pool's Wait")
	assert.True(t, ok)
}

func TestResizeCountsAWorkerThatDiedOnce(t *testing.T) {
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
	until(t, func() bool { s := p.Stats(); return s.Workers == 1 && s.Running+s.Queued == 0 && crew.PoolIdle(p) == 1 })

	p.Resize(1) // one is live already: nothing to retire
	assert.NoError(t, p.Submit(context.Background(), failsWith(nil)), "the live worker still takes jobs")
	p.Resize(3) // two new workers replace the dead one
	meet := newMeeting(3)
	for range 3 {
		require.NoError(t, p.Submit(context.Background(), func(context.Context) error { meet.arrive(); return nil }))
	}
	assert.True(t, closedWithin(t, meet.all, "three jobs running at once"))
	assert.Equal(t, 3, p.Stats().Workers)
	assert.Error(t, p.Wait(), "the Goexit is the pool's error")
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
	until(t, func() bool { return p.Stats().Inline == 1 })
	close(release[0])
	until(t, func() bool { s := p.Stats(); return s.Running+s.Queued == 0 })
	before := p.Stats()
	p.Resize(1)
	p.Resize(2) // a new worker in place of the retired one, whose jobs stay counted
	after := p.Stats()
	assert.Equal(t, before.Inline, after.Inline)
	assert.Equal(t, before.Completed, after.Completed)
	require.NoError(t, p.Wait())
}

func TestShutdownOfADrainedPoolWithADoneContextReturnsNil(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 50 {
		assert.NoError(t, crew.NewGroup(1).Shutdown(ctx), "every job ended before ctx was looked at")
	}
}

func TestABatchsBlockedSubmitReturnsWhenTheBatchFails(t *testing.T) {
	p := crew.NewGroup(1, crew.WithQueueSize(1)) // a bound of 2
	b, _ := p.NewBatch(context.Background())
	boom := errors.New("boom")
	started, release := make(chan struct{}, 1), gateFor(t)
	require.NoError(t, b.Submit(context.Background(), gated(started, release, boom)))
	<-started
	require.NoError(t, b.Submit(context.Background(), failsWith(nil))) // full now
	blocked := inBackground(func() error { return b.Submit(context.Background(), failsWith(nil)) })
	until(t, func() bool { return crew.PoolBlocked(p) == 1 })
	close(release)
	err, ok := returnsWithin(t, blocked, "the blocked Submit")
	require.True(t, ok)
	assert.ErrorIs(t, err, context.Canceled, "its batch's context ended: the job would not run")
	assert.ErrorIs(t, b.Wait(), boom)
	require.NoError(t, p.Wait())
}
