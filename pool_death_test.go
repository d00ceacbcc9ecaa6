package crew_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// Tests of pools whose workers die (a job calls runtime.Goexit) and of the
// races around Wait, found by review.

func TestTheLastWorkerDyingRefusesTheBlockedSubmits(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []crew.Option
	}{
		{"default backlog", nil},
		{"WithConsistentHash", []crew.Option{crew.WithConsistentHash(func(j int) int { return j })}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				started, release := make(chan struct{}), gateFor(t)
				var dead letters
				p := crew.NewPool(1, func(_ context.Context, j int) error {
					if j == 0 {
						close(started)
						<-release
						runtime.Goexit()
					}
					return nil
				}, append(tc.opts, crew.WithQueueSize(1), crew.WithDeadLetters(dead.sink))...)
				ctx := context.Background()
				require.NoError(t, p.Submit(ctx, 0))
				<-started
				require.NoError(t, p.Submit(ctx, 1)) // the pool is full
				errc := make(chan error, 1)
				go func() { errc <- p.Submit(ctx, 2) }()
				synctest.Wait()
				require.Equal(t, 1, crew.PoolBlocked(p))
				close(release)
				assert.ErrorIs(t, <-errc, crew.ErrNoRoutee, "no worker is left to run it")
				assert.ErrorContains(t, p.Wait(), "runtime.Goexit")
				assert.Equal(t, []int{1}, dead.messages(), "the queued job is a dead letter; the refused one is not")
				s := p.Stats()
				assert.EqualValues(t, 2, s.Submitted)
				assert.EqualValues(t, 1, s.Dropped)
			})
		})
	}
}

func TestAKeysNextJobIsSkippedWhenItsPredecessorsGoexitFailedThePool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type job struct{ key, n int }
		started, release := make(chan struct{}), gateFor(t)
		var ranAfterDone atomic.Int32
		p := crew.NewPool(2, func(ctx context.Context, j job) error {
			if j.n == 0 {
				close(started)
				<-release
				runtime.Goexit() // fails the pool, which stops dispatching
			}
			if ctx.Err() != nil {
				ranAfterDone.Add(1)
			}
			return nil
		}, crew.WithKey(func(j job) int { return j.key }), crew.WithCancelOnError())
		ctx := context.Background()
		require.NoError(t, p.Submit(ctx, job{1, 0}))
		<-started
		require.NoError(t, p.Submit(ctx, job{1, 1})) // waits behind its key
		synctest.Wait()
		require.Equal(t, 1, crew.PoolIdle(p), "the other worker is idle: job 1 waits behind its key")
		close(release)
		assert.ErrorContains(t, p.Wait(), "runtime.Goexit")
		assert.Zero(t, ranAfterDone.Load(), "job 1 ran after the pool stopped dispatching")
		assert.EqualValues(t, 1, p.Stats().Canceled)
	})
}

func TestAKeysNextJobKeepsItsTurnWhenItsWorkerDies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Worker 0 runs k0 (key 0), behind which k1..k3 wait; worker 1 is idle;
		// a Submit of key 1, later than all of them, is blocked. k0 calls
		// Goexit: k1 was submitted first and may run, so it starts first.
		type job struct{ key, n int }
		started, release := make(chan struct{}), gateFor(t)
		var rec recorder
		p := crew.NewPool(2, func(_ context.Context, j job) error {
			if j.n == 0 {
				close(started)
				<-release
				runtime.Goexit()
			}
			rec.add(j.n)
			return nil
		}, crew.WithKey(func(j job) int { return j.key }), crew.WithQueueSize(1))
		ctx := context.Background()
		require.NoError(t, p.Submit(ctx, job{0, 0}))
		<-started
		for n := 1; n <= 3; n++ {
			require.NoError(t, p.Submit(ctx, job{0, n}))
		}
		errc := make(chan error, 1)
		go func() { errc <- p.Submit(ctx, job{1, 100}) }()
		synctest.Wait()
		require.Equal(t, 1, crew.PoolBlocked(p))
		require.Equal(t, 1, crew.PoolIdle(p))
		close(release)
		require.NoError(t, <-errc)
		assert.ErrorContains(t, p.Wait(), "runtime.Goexit")
		got := rec.get()
		require.NotEmpty(t, got)
		assert.Equal(t, 1, got[0], "start order %v", got)
	})
}

// slowValue is a context whose first Value call waits for gate, after
// closing entered: it holds a job's own Submit between its queueing on the
// full pool and its look at its context, where Wait can begin.
type slowValue struct {
	context.Context
	entered, gate chan struct{}
	once          *atomic.Bool
}

func (c slowValue) Value(k any) any {
	if c.once.CompareAndSwap(false, true) {
		close(c.entered)
		<-c.gate
	}
	return c.Context.Value(k)
}

func TestAJobsOwnSubmitIsAcceptedWhenWaitBeginsWhileItIsQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(1, crew.WithQueueSize(1))
		ctx := context.Background()
		entered, gate := make(chan struct{}), make(chan struct{})
		errc := make(chan error, 1)
		var childRan atomic.Bool
		aStarted, holdA := make(chan struct{}), make(chan struct{})
		require.NoError(t, p.Submit(ctx, func(jctx context.Context) error {
			close(aStarted)
			<-holdA
			sc := slowValue{jctx, entered, gate, new(atomic.Bool)}
			errc <- p.Submit(sc, func(context.Context) error { childRan.Store(true); return nil })
			return nil
		}))
		<-aStarted
		require.NoError(t, p.Submit(ctx, func(context.Context) error { return nil })) // the pool is full
		close(holdA)
		<-entered // the job's Submit is queued, and has not looked at its context yet
		waited := make(chan error, 1)
		go func() { waited <- p.Wait() }()
		synctest.Wait()
		require.True(t, crew.PoolClosed(p), "Wait has begun")
		close(gate)
		assert.NoError(t, <-errc, "a job's own Submit is accepted after Wait began")
		require.NoError(t, <-waited)
		assert.True(t, childRan.Load())
	})
}

func TestAKeyedRouterLosesNoMessageAfterBroadcastAndStop(t *testing.T) {
	// The routee stops while it handles a message, with a Broadcast message
	// and a keyed one queued and another of that key waiting in the router:
	// every message is handled or becomes a dead letter.
	started, gate := make(chan struct{}), make(chan struct{})
	var dead letters
	var handled atomic.Int32
	r := crew.SpawnRouter(context.Background(), 1, func(_ context.Context, j keyedJob) error {
		if j.key == 1 {
			close(started)
			<-gate
		}
		handled.Add(1)
		return nil
	}, crew.WithKey(jobKey), crew.WithDeadLetters(dead.sink))
	ctx := context.Background()
	require.NoError(t, r.Tell(ctx, keyedJob{key: 1}))
	<-started
	require.NoError(t, r.Broadcast(ctx, keyedJob{key: 2}))
	require.NoError(t, r.Tell(ctx, keyedJob{key: 3, seq: 0}))
	require.NoError(t, r.Tell(ctx, keyedJob{key: 3, seq: 1}))
	r.Stop()
	close(gate)
	for _, ref := range r.Routees() {
		<-ref.Done()
	}
	assert.EqualValues(t, 1, handled.Load())
	assert.Len(t, dead.get(), 3, "the broadcast and both messages of key 3")
	assert.Zero(t, r.Keys())
}

func TestANaNKeyPanicsWithACrewMessage(t *testing.T) {
	p := crew.NewPool(1, func(context.Context, float64) error { return nil },
		crew.WithKey(func(f float64) float64 { return f }))
	nan := 0.0
	nan /= nan
	assert.PanicsWithValue(t, "crew: WithKey: the key function returned a key that equals no key (NaN)", func() {
		_ = p.Submit(context.Background(), nan)
	})
	require.NoError(t, p.Submit(context.Background(), 1), "the pool goes on")
	require.NoError(t, p.Wait())
	assert.Zero(t, p.Stats().Keys)
}

func TestTheLastWorkerDyingDropsTheJobsBehindAKeyARetiredWorkerStillRuns(t *testing.T) {
	// Worker 0 runs key 1's first job, worker 1 key 2's; each key has a
	// job behind it. Resize retires worker 1 while it runs, then worker 0's
	// job calls runtime.Goexit: no worker is left to run key 2's second
	// job once worker 1 ends the first, so it is dropped with key 1's, and
	// Wait returns.
	synctest.Test(t, func(t *testing.T) {
		type job struct{ key, n int }
		release := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
		var letters atomic.Int64
		p := crew.NewPool(2, func(ctx context.Context, j job) error {
			if j.n == 0 {
				i := crew.WorkerIndex(ctx)
				<-release[i]
				if i == 0 {
					runtime.Goexit()
				}
			}
			return nil
		}, crew.WithKey(func(j job) int { return j.key }), crew.WithDeadLetters(func(crew.DeadLetter) { letters.Add(1) }))
		synctest.Wait() // both workers idle: the first job goes to worker 0, the second to worker 1
		ctx := context.Background()
		for _, j := range []job{{1, 0}, {2, 0}, {1, 1}, {2, 1}} {
			require.NoError(t, p.Submit(ctx, j))
		}
		p.Resize(1) // retires worker 1, busy
		close(release[0])
		synctest.Wait() // worker 0 died, the last live one
		assert.EqualValues(t, 2, letters.Load(), "both keys' second jobs are dropped")
		close(release[1])
		assert.ErrorContains(t, p.Wait(), "runtime.Goexit")
		s := p.Stats()
		assert.EqualValues(t, 2, s.Completed)
		assert.EqualValues(t, 2, s.Dropped)
	})
}

func TestABatchWaitsForTheDeadLettersOfItsJobsTheLastWorkerLeft(t *testing.T) {
	// The only worker dies while a job of the batch waits: the job is a
	// dead letter, and the batch's Wait returns once the dead letter was
	// delivered and counted, with an error that matches ErrNoRoutee.
	synctest.Test(t, func(t *testing.T) {
		started, release := make(chan struct{}), make(chan struct{})
		p := crew.NewPool(1, func(_ context.Context, n int) error {
			if n == 0 {
				close(started)
				<-release
				runtime.Goexit()
			}
			return nil
		})
		ctx := context.Background()
		require.NoError(t, p.Submit(ctx, 0))
		<-started
		delivering, delivered := make(chan struct{}), make(chan struct{})
		b, _ := p.NewBatch(ctx, crew.WithDeadLetters(func(crew.DeadLetter) {
			close(delivering)
			<-delivered
		}))
		require.NoError(t, b.Submit(ctx, 1))
		waited := make(chan error, 1)
		go func() { waited <- b.Wait() }()
		close(release)
		<-delivering
		synctest.Wait()
		select {
		case err := <-waited:
			t.Fatalf("Batch.Wait returned %v while its job's dead letter was being delivered", err)
		default:
		}
		close(delivered)
		assert.ErrorIs(t, <-waited, crew.ErrNoRoutee)
		assert.EqualValues(t, 1, b.Stats().Dropped)
		assert.Error(t, p.Wait())
	})
}

func TestADeadLetterSinkThatCallsGoexitOnAWorkerLosesNoJobCount(t *testing.T) {
	// The only worker ends its job, lets in a blocked Submit whose job
	// evicts the oldest from a DropOldest backlog, and takes the next job;
	// the eviction's dead letter, delivered on the worker, calls
	// runtime.Goexit before that job starts. The worker is gone: the job it
	// took is dropped, not counted as run, and Wait returns.
	synctest.Test(t, func(t *testing.T) {
		started, release := make(chan struct{}), make(chan struct{})
		var ran atomic.Int64
		p := crew.NewPool(1, func(_ context.Context, n int) error {
			ran.Add(1)
			if n == 0 {
				close(started)
				<-release
			}
			return nil
		}, crew.WithMailbox(func() crew.Mailbox[int] { return crew.NewBounded[int](1, crew.DropOldest) }),
			crew.WithQueueSize(1), crew.WithDeadLetters(func(crew.DeadLetter) { runtime.Goexit() }))
		ctx := context.Background()
		require.NoError(t, p.Submit(ctx, 0))
		<-started
		require.NoError(t, p.Submit(ctx, 1)) // the pool is full
		go func() { _ = p.Submit(ctx, 2) }()
		synctest.Wait()
		require.Equal(t, 1, crew.PoolBlocked(p))
		close(release)
		synctest.Wait() // the worker has let the blocked Submit in, and died
		assert.ErrorContains(t, p.Wait(), "runtime.Goexit")
		s := p.Stats()
		assert.EqualValues(t, 1, ran.Load())
		assert.EqualValues(t, 1, s.Completed)
		assert.EqualValues(t, 2, s.Dropped, "the evicted job and the one the worker took")
		assert.Zero(t, s.Running+s.Queued)
	})
}

func TestAnErrorHandlerThatCallsGoexitAsAJobsPanicIsRecordedEndsTheWorkerNotWait(t *testing.T) {
	// A job panics; the error handler that the panic's failure reaches
	// calls runtime.Goexit on the worker. The worker dies, its job counted
	// out as run, and Wait returns (a worker left counted as running would
	// keep it waiting forever).
	synctest.Test(t, func(t *testing.T) {
		var once atomic.Bool
		p := crew.NewGroup(2, crew.WithErrorHandler(func(error) {
			if once.CompareAndSwap(false, true) {
				runtime.Goexit()
			}
		}))
		require.NoError(t, p.Submit(context.Background(), func(context.Context) error { explode(); return nil }))
		err := p.Wait()
		assert.ErrorContains(t, err, "runtime.Goexit")
		s := p.Stats()
		assert.EqualValues(t, 1, s.Completed)
		assert.Zero(t, s.Running+s.Queued)
		assert.Equal(t, 1, crew.PoolDeadWorkers(p))
	})
}
