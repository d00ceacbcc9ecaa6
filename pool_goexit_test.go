package crew_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// Tests of pools whose jobs, sinks or error handlers call runtime.Goexit
// (a new goroutine takes the worker on), and of the races around Wait,
// found by review.

func TestAGoexitLetsTheBlockedSubmitsIn(t *testing.T) {
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
				var ran recorder
				p := crew.NewPool(1, func(_ context.Context, j int) error {
					if j == 0 {
						close(started)
						<-release
						runtime.Goexit()
					}
					ran.add(j)
					return nil
				}, append(tc.opts, crew.WithQueueSize(1))...)
				ctx := context.Background()
				require.NoError(t, p.Submit(ctx, 0))
				<-started
				require.NoError(t, p.Submit(ctx, 1)) // the pool is full
				errc := make(chan error, 1)
				go func() { errc <- p.Submit(ctx, 2) }()
				synctest.Wait()
				require.Equal(t, 1, crew.PoolBlocked(p))
				close(release)
				assert.NoError(t, <-errc, "the room job 0 left goes to the blocked Submit")
				assert.ErrorIs(t, p.Wait(), crew.ErrGoexit)
				assert.Equal(t, []int{1, 2}, ran.get(), "the worker's new goroutine runs the jobs behind job 0")
				s := p.Stats()
				assert.EqualValues(t, 3, s.Submitted)
				assert.EqualValues(t, 3, s.Completed)
				assert.Zero(t, s.Dropped)
				assert.EqualValues(t, 1, s.Replaced)
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
		assert.ErrorIs(t, p.Wait(), crew.ErrGoexit)
		assert.Zero(t, ranAfterDone.Load(), "job 1 ran after the pool stopped dispatching")
		assert.EqualValues(t, 1, p.Stats().Canceled)
	})
}

func TestAKeysNextJobKeepsItsTurnWhenItsPredecessorCallsGoexit(t *testing.T) {
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
		assert.ErrorIs(t, p.Wait(), crew.ErrGoexit)
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

func TestAGoexitBesideARetiredWorkerLeavesEveryKeysJobsToRun(t *testing.T) {
	// Worker 0 runs key 1's first job, worker 1 key 2's; each key has a
	// job behind it. Resize retires worker 1 while it runs, then worker
	// 0's job calls runtime.Goexit: its new goroutine runs key 1's second
	// job, and, once worker 1 ends its job and exits, key 2's.
	synctest.Test(t, func(t *testing.T) {
		type job struct{ key, n int }
		release := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
		p := crew.NewPool(2, func(ctx context.Context, j job) error {
			if j.n == 0 {
				i := crew.WorkerIndex(ctx)
				<-release[i]
				if i == 0 {
					runtime.Goexit()
				}
			}
			return nil
		}, crew.WithKey(func(j job) int { return j.key }))
		synctest.Wait() // both workers idle: the first job goes to worker 0, the second to worker 1
		ctx := context.Background()
		for _, j := range []job{{1, 0}, {2, 0}, {1, 1}, {2, 1}} {
			require.NoError(t, p.Submit(ctx, j))
		}
		p.Resize(1) // retires worker 1, busy
		close(release[0])
		synctest.Wait()
		assert.EqualValues(t, 2, p.Stats().Completed, "key 1's jobs ran")
		close(release[1])
		assert.ErrorIs(t, p.Wait(), crew.ErrGoexit)
		s := p.Stats()
		assert.EqualValues(t, 4, s.Completed)
		assert.Zero(t, s.Dropped)
		assert.Equal(t, 1, s.Workers)
	})
}

func TestADeadLetterSinkThatCallsGoexitOnAWorkerLosesNoJob(t *testing.T) {
	// The only worker ends its job, lets in a blocked Submit whose job
	// evicts the oldest from a DropOldest backlog, and takes the next job;
	// the eviction's dead letter, delivered on the worker, calls
	// runtime.Goexit before that job starts. The worker's new goroutine
	// runs the job it took, and the Goexit fails the pool.
	synctest.Test(t, func(t *testing.T) {
		started, release := make(chan struct{}), make(chan struct{})
		var ran recorder
		p := crew.NewPool(1, func(_ context.Context, n int) error {
			ran.add(n)
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
		synctest.Wait() // the worker let the blocked Submit in, and a new goroutine ran the job it took
		assert.ErrorIs(t, p.Wait(), crew.ErrGoexit)
		s := p.Stats()
		assert.Equal(t, []int{0, 2}, ran.get(), "job 1 was evicted")
		assert.EqualValues(t, 2, s.Completed)
		assert.EqualValues(t, 1, s.Dropped, "the evicted job")
		assert.EqualValues(t, 1, s.Replaced)
		assert.Zero(t, s.Running+s.Queued)
	})
}

func TestAnErrorHandlerThatCallsGoexitAsAJobsPanicIsRecordedLosesNoFailure(t *testing.T) {
	// A job panics; the error handler that the panic's failure reaches
	// calls runtime.Goexit on the worker. The failure was recorded before
	// the handler ran: Wait returns the panic; the job is counted out as
	// run, and the worker goes on on a new goroutine.
	synctest.Test(t, func(t *testing.T) {
		var once atomic.Bool
		p := crew.NewGroup(2, crew.WithErrorHandler(func(error) {
			if once.CompareAndSwap(false, true) {
				runtime.Goexit()
			}
		}))
		require.NoError(t, p.Submit(context.Background(), func(context.Context) error { explode(); return nil }))
		err := p.Wait()
		assert.ErrorContains(t, err, "crew: job panicked: kaboom")
		s := p.Stats()
		assert.EqualValues(t, 1, s.Completed)
		assert.EqualValues(t, 1, s.Failed)
		assert.EqualValues(t, 1, s.Replaced)
		assert.Zero(t, s.Running+s.Queued)
	})
}

// A runtime.Goexit reads the same wherever it happens, and errors.Is
// matches it with ErrGoexit; the pool it ran on keeps its workers.
func TestAGoexitIsOneFailureEverywhere(t *testing.T) {
	exit := func(context.Context, int) (int, error) { runtime.Goexit(); return 0, nil }
	inputs := []int{1, 2, 3}
	forms := map[string]func(p *crew.Pool[crew.Job]) error{ // those that take p run on it
		"Map": func(*crew.Pool[crew.Job]) error {
			_, err := crew.Map(t.Context(), 2, inputs, exit)
			return err
		},
		"MapBatch": func(p *crew.Pool[crew.Job]) error {
			_, err := crew.MapBatch(t.Context(), p, inputs, exit)
			return err
		},
		"MapSeq": func(*crew.Pool[crew.Job]) error {
			return gather(crew.MapSeq(t.Context(), 2, slices.Values(inputs), exit))[0].err
		},
		"MapSeqBatch": func(p *crew.Pool[crew.Job]) error {
			return gather(crew.MapSeqBatch(t.Context(), p, slices.Values(inputs), exit))[0].err
		},
		"a Stream's task": func(*crew.Pool[crew.Job]) error {
			s := crew.NewStream(t.Context(), 2)
			_ = s.Submit(t.Context(), func(context.Context) (func() error, error) { runtime.Goexit(); return nil, nil })
			return s.Wait()
		},
		"a Stream's callback": func(p *crew.Pool[crew.Job]) error {
			s := crew.NewStreamBatch(t.Context(), p)
			_ = s.Submit(t.Context(), func(context.Context) (func() error, error) {
				return func() error { runtime.Goexit(); return nil }, nil
			})
			return s.Wait()
		},
	}
	for name, run := range forms {
		t.Run(name, func(t *testing.T) {
			p := crew.NewGroup(1)
			err := run(p)
			require.ErrorIs(t, err, crew.ErrGoexit)
			assert.EqualError(t, err, "crew: job called runtime.Goexit")
			ran := make(chan struct{})
			require.NoError(t, p.Submit(context.Background(), func(context.Context) error { close(ran); return nil }))
			<-ran // the pool's one worker runs its next job
			require.NoError(t, p.Wait(), "the failure was the batch's")
		})
	}
}

func TestARoutersRouteeWhoseHandlerCallsGoexitGoesOn(t *testing.T) {
	errs := make(chan error, 1)
	var handled atomic.Int64
	r := crew.SpawnRouter(context.Background(), 2, func(_ context.Context, v int) error {
		if v == 0 {
			runtime.Goexit()
		}
		handled.Add(1)
		return nil
	}, crew.WithName("r"), crew.WithStrategy(crew.RoundRobin()), crew.WithErrorHandler(func(err error) { errs <- err }))
	for v := range 10 {
		require.NoError(t, r.Tell(context.Background(), v))
	}
	err := <-errs
	assert.ErrorIs(t, err, crew.ErrGoexit)
	assert.EqualError(t, err, `crew: actor "r-0": handler called runtime.Goexit`)
	r.Drain()
	<-r.Done()
	assert.EqualValues(t, 9, handled.Load(), "both routees handled the rest")
	assert.Zero(t, r.DeadLetters())
}

// An error handler that calls runtime.Goexit as it reports a failure (a
// test's t.FailNow in it) ends the goroutine, and nothing more: the job,
// or the message, failed once, with its own error.
func TestAnErrorHandlerThatCallsGoexitFailsNothingTwice(t *testing.T) {
	boom := errors.New("boom")
	t.Run("a pool's", func(t *testing.T) {
		var calls []error // on the worker, one call at a time
		m := &metered{}
		p := crew.NewGroup(1, crew.WithMetrics(m), crew.WithErrorHandler(func(err error) {
			calls = append(calls, err)
			runtime.Goexit()
		}))
		require.NoError(t, p.Submit(context.Background(), failsWith(boom)))
		assert.ErrorIs(t, p.Wait(), boom)
		require.Len(t, calls, 1)
		assert.ErrorIs(t, calls[0], boom)
		s := p.Stats()
		assert.EqualValues(t, 1, s.Failed)
		assert.EqualValues(t, 1, s.Completed)
		assert.EqualValues(t, 1, s.Replaced)
		src := m.only(t)
		assert.Equal(t, 1, src.count(crew.EventFailed))
		assert.Equal(t, 1, src.count(crew.EventCompleted))
		assert.Len(t, src.observed(crew.RunTime), 1)
	})
	t.Run("an actor's", func(t *testing.T) {
		calls := make(chan error, 2)
		m := &metered{}
		a := crew.Spawn(context.Background(), func(context.Context, int) error { return boom },
			crew.WithMetrics(m), crew.WithErrorHandler(func(err error) {
				calls <- err
				runtime.Goexit()
			}))
		require.NoError(t, a.Tell(context.Background(), 1))
		require.NoError(t, a.Tell(context.Background(), 2))
		assert.ErrorIs(t, <-calls, boom)
		assert.ErrorIs(t, <-calls, boom, "the second message's failure: the first's was not reported twice")
		a.Stop()
		<-a.Done()
		src := m.only(t)
		assert.Equal(t, 2, src.count(crew.EventFailed))
		assert.Equal(t, 2, src.count(crew.EventCompleted))
		assert.Equal(t, 2, src.count(crew.EventReplaced))
	})
}

// A dead-letter sink that calls runtime.Goexit as an actor stops ends the
// goroutine that stopped it; the actor's Done still closes.
func TestAnActorsDoneClosesWhenItsDeadLetterSinkCallsGoexit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started, release := make(chan struct{}), make(chan struct{})
		a := crew.Spawn(context.Background(), func(_ context.Context, v int) error {
			if v == 0 {
				close(started)
				<-release
			}
			return nil
		}, crew.WithDeadLetters(func(crew.DeadLetter) { runtime.Goexit() }))
		for v := range 3 {
			require.NoError(t, a.Tell(context.Background(), v))
		}
		<-started
		go a.Stop() // its dead letters' sink ends this goroutine
		synctest.Wait()
		close(release)
		<-a.Done() // the bubble deadlocks if Done never closes
		assert.True(t, a.Stopped())
	})
}

// gatedReplaced is a Recorder whose count of a replaced goroutine waits
// for gate.
type gatedReplaced struct {
	metered
	gate chan struct{}
}

func (g *gatedReplaced) Track(s crew.Source) crew.Recorder {
	return &gatedSource{Recorder: g.metered.Track(s), gate: g.gate}
}

type gatedSource struct {
	crew.Recorder
	gate chan struct{}
}

func (g *gatedSource) Add(e crew.Event, n int) {
	if e == crew.EventReplaced {
		<-g.gate
	}
	g.Recorder.Add(e, n)
}

// An actor whose goroutine a runtime.Goexit ended counts the replacement
// before the new goroutine starts: Done, which that goroutine closes,
// never closes before the count.
func TestAnActorCountsItsReplacedGoroutineBeforeDoneCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &gatedReplaced{gate: make(chan struct{})}
		a := crew.Spawn(context.Background(), func(context.Context, int) error { runtime.Goexit(); return nil }, crew.WithMetrics(m))
		require.NoError(t, a.Tell(context.Background(), 1))
		synctest.Wait() // the goroutine the Goexit ends waits to count its replacement
		a.Stop()
		synctest.Wait()
		select {
		case <-a.Done():
			t.Fatal("Done closed before the replaced goroutine was counted")
		default:
		}
		close(m.gate)
		<-a.Done()
		assert.Equal(t, 1, m.only(t).count(crew.EventReplaced))
	})
}
