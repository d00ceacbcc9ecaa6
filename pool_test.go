package crew_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sourcegraph/conc/panics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/crewlib/crew"
)

func TestFirstErrorWinsAndCancelsTheContext(t *testing.T) {
	boom := errors.New("boom")
	p, ctx := crew.WithContext(context.Background(), 4)
	started, release := make(chan struct{}, 4), gateFor(t)
	for range 3 {
		require.NoError(t, p.Submit(ctx, func(ctx context.Context) error {
			started <- struct{}{}
			<-ctx.Done() // runs until the first error cancels the group
			return ctx.Err()
		}))
	}
	require.NoError(t, p.Submit(ctx, gated(started, release, boom)))
	for range 4 {
		<-started
	}
	close(release)
	err := p.Wait()
	assert.Same(t, boom, err, "Wait returns the first error itself, as errgroup does")
	assert.Same(t, boom, context.Cause(ctx), "the context's cause is the first error")
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	s := p.Stats()
	assert.EqualValues(t, 4, s.Failed)
	assert.EqualValues(t, 4, s.Completed)
}

func TestWaitCancelsTheContextOfAGroupThatSucceeded(t *testing.T) {
	p, ctx := crew.WithContext(context.Background(), 2)
	require.NoError(t, p.Submit(ctx, func(context.Context) error { return nil }))
	require.NoError(t, p.Wait())
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	assert.ErrorIs(t, context.Cause(ctx), context.Canceled)
}

func TestJobsQueuedAfterCancellationAreNotStarted(t *testing.T) {
	var dead letters
	boom := errors.New("boom")
	p, ctx := crew.WithContext(context.Background(), 1,
		crew.WithQueueSize(10), crew.WithDeadLetters(dead.sink))
	started, release := make(chan struct{}, 1), gateFor(t)
	require.NoError(t, p.Submit(ctx, gated(started, release, boom)))
	<-started
	var ran atomic.Int32
	for range 5 {
		require.NoError(t, p.Submit(ctx, func(context.Context) error {
			ran.Add(1)
			return nil
		}))
	}
	close(release)
	require.Same(t, boom, p.Wait())
	assert.Zero(t, ran.Load(), "no job starts once the first error canceled the group")
	s := p.Stats()
	assert.EqualValues(t, 5, s.Canceled)
	assert.EqualValues(t, 1, s.Completed)
	assert.EqualValues(t, 6, s.Submitted)
	require.Len(t, dead.get(), 5, "the skipped jobs reach the dead-letter sink")
	for _, d := range dead.get() {
		assert.Same(t, boom, d.Reason)
	}
	assert.ErrorIs(t, p.Submit(ctx, func(context.Context) error { return nil }), crew.ErrPoolClosed,
		"after Wait, whatever ctx's state")
}

func TestParentCancellationSkipsQueuedJobsAndWaitSaysSo(t *testing.T) {
	parent, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("shutting down")
	started := make(chan struct{})
	p := crew.NewPool(1, func(ctx context.Context, v int) error {
		if v == 0 {
			close(started)
			<-ctx.Done()
		}
		return nil
	}, crew.WithParent(parent), crew.WithQueueSize(4))
	for v := range 4 {
		require.NoError(t, p.Submit(context.Background(), v))
	}
	<-started
	cancel(stop)
	err := p.Wait()
	assert.Same(t, stop, err, "jobs were skipped: Wait must not report success")
	assert.EqualValues(t, 3, p.Stats().Canceled)
	assert.EqualValues(t, 1, p.Stats().Completed)
}

func TestSubmitHonoursItsContextWhileBlocked(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"canceled", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, context.Canceled},
		{"past its deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Millisecond)
		}, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := crew.NewGroup(1, crew.WithQueueSize(1))
				started, release := make(chan struct{}, 2), gateFor(t)
				ctx := context.Background()
				require.NoError(t, p.Submit(ctx, gated(started, release, nil)))
				require.NoError(t, p.Submit(ctx, gated(started, release, nil)))
				<-started // one runs, one is queued: the pool is full
				assert.False(t, p.TrySubmit(func(context.Context) error { return nil }))

				sctx, cancel := tc.ctx()
				defer cancel()
				errc := make(chan error, 1)
				go func() { errc <- p.Submit(sctx, func(context.Context) error { return nil }) }()
				if tc.want == context.Canceled {
					synctest.Wait()
					require.Equal(t, 1, crew.PoolBlocked(p))
					cancel()
				}
				assert.Equal(t, tc.want, <-errc)
				assert.Zero(t, crew.PoolBlocked(p))
				close(release)
				<-started
				require.NoError(t, p.Wait())
				assert.EqualValues(t, 2, p.Stats().Submitted, "the refused job was not counted")
			})
		})
	}
}

func TestSubmitWithADoneContextRefusesAtOnce(t *testing.T) {
	p := crew.NewGroup(2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.Same(t, context.Canceled, p.Submit(ctx, func(context.Context) error { return nil }))
	require.NoError(t, p.Wait())
	assert.Zero(t, p.Stats().Submitted)
}

func TestBlockedSubmitTakesTheFirstRoomAnywhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Two workers, each running a job and holding one more. Only the job
		// behind gateB can end; a Submit blocked on the full pool must get the
		// room it leaves, wherever it is, and not wait for the others.
		started := make(chan struct{}, 5)
		p := crew.NewPool(2, func(ctx context.Context, gate chan struct{}) error {
			started <- struct{}{}
			<-gate
			return nil
		}, crew.WithQueueSize(1))
		gateA, gateB := make(chan struct{}), make(chan struct{})
		ctx := context.Background()
		require.NoError(t, p.Submit(ctx, gateA))
		<-started
		require.NoError(t, p.Submit(ctx, gateB))
		<-started // both workers are busy: what comes next waits
		require.NoError(t, p.Submit(ctx, gateA))
		require.NoError(t, p.Submit(ctx, gateA))
		errc := make(chan error, 1)
		free := make(chan struct{})
		close(free)
		go func() { errc <- p.Submit(ctx, free) }()
		synctest.Wait()
		require.Equal(t, 1, crew.PoolBlocked(p))
		close(gateB)
		require.NoError(t, <-errc)
		close(gateA)
		require.NoError(t, p.Wait())
		assert.EqualValues(t, 5, p.Stats().Completed)
	})
}

func TestBlockedSubmitsAreServedInArrivalOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// One worker and one waiting job: the pool is full. Five Submits block,
		// in turn; then rooms open one at a time, and each must go to the
		// longest-blocked Submit.
		p := crew.NewPool(1, func(_ context.Context, gate chan struct{}) error {
			<-gate
			return nil
		}, crew.WithQueueSize(1))
		ctx := context.Background()
		gates := make([]chan struct{}, 7)
		for i := range gates {
			gates[i] = make(chan struct{})
		}
		require.NoError(t, p.Submit(ctx, gates[0])) // running
		require.NoError(t, p.Submit(ctx, gates[1])) // queued
		returned := make(chan int)
		for i := range 5 {
			go func() {
				assert.NoError(t, p.Submit(ctx, gates[i+2]))
				returned <- i
			}()
			synctest.Wait()
			require.Equal(t, i+1, crew.PoolBlocked(p), "Submit %d is blocked behind the earlier ones", i)
		}
		for i := range 5 {
			close(gates[i]) // the running job ends: one room opens
			assert.Equal(t, i, <-returned)
		}
		close(gates[5])
		close(gates[6])
		require.NoError(t, p.Wait())
	})
}

func TestSubmitAfterWaitIsRefused(t *testing.T) {
	p := crew.NewGroup(2)
	require.NoError(t, p.Wait())
	assert.ErrorIs(t, p.Submit(context.Background(), func(context.Context) error { return nil }), crew.ErrPoolClosed)
	assert.False(t, p.TrySubmit(func(context.Context) error { return nil }))
	require.NoError(t, p.Wait(), "Wait may be called again")
}

func TestTrySubmit(t *testing.T) {
	p := crew.NewGroup(1, crew.WithQueueSize(1))
	started, release := make(chan struct{}, 2), gateFor(t)
	require.True(t, p.TrySubmit(gated(started, release, nil)))
	require.True(t, p.TrySubmit(gated(started, release, nil)))
	<-started
	assert.False(t, p.TrySubmit(func(context.Context) error { return nil }), "the pool is full")
	close(release)
	<-started
	require.NoError(t, p.Wait())
	assert.EqualValues(t, 2, p.Stats().Completed)
}

func TestPanicsAreReportedWithTheirStackAndOtherJobsRun(t *testing.T) {
	p := crew.NewGroup(2)
	var ran atomic.Int32
	ctx := context.Background()
	for i := range 20 {
		require.NoError(t, p.Submit(ctx, func(context.Context) error {
			if i == 7 {
				explode()
			}
			ran.Add(1)
			return nil
		}))
	}
	err := p.Wait()
	var rec *panics.ErrRecovered
	require.ErrorAs(t, err, &rec)
	assert.Equal(t, "kaboom", rec.Value)
	assert.Contains(t, string(rec.Stack), "explode", "the stack shows where it panicked")
	assert.EqualValues(t, 19, ran.Load())
	s := p.Stats()
	assert.EqualValues(t, 1, s.Panicked)
	assert.EqualValues(t, 1, s.Failed)
	assert.EqualValues(t, 20, s.Completed)
}

func TestAllErrorsLeavesOutTheCancellationNoise(t *testing.T) {
	first, second := errors.New("first"), errors.New("second")
	p, ctx := crew.WithContext(context.Background(), 3, crew.WithAllErrors())
	started, release := make(chan struct{}, 3), gateFor(t)
	require.NoError(t, p.Submit(ctx, func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err() // noise
	}))
	require.NoError(t, p.Submit(ctx, func(ctx context.Context) error {
		started <- struct{}{}
		<-ctx.Done()
		return fmt.Errorf("cleanup: %w", second) // a real error, after the cancel
	}))
	require.NoError(t, p.Submit(ctx, gated(started, release, first)))
	for range 3 {
		<-started
	}
	close(release)
	err := p.Wait()
	assert.ErrorIs(t, err, first)
	assert.ErrorIs(t, err, second)
	assert.NotErrorIs(t, err, context.Canceled)
	assert.Equal(t, "first\ncleanup: second", err.Error())
}

func TestNestedSubmitOnASaturatedPoolFinishes(t *testing.T) {
	// Every job submits children until depth 4: with one worker and one
	// slot, most of those Submits find the pool full, where blocking would
	// deadlock. They run inline instead.
	for _, tc := range []struct {
		name string
		opts []crew.Option
	}{
		{"default mailbox", []crew.Option{crew.WithQueueSize(1)}},
		{"Backpressure mailbox of one", []crew.Option{crew.WithMailbox(func() crew.Mailbox[crew.Job] {
			return crew.NewBounded[crew.Job](1, crew.Backpressure)
		})}},
	} {
		// A job's own Submit is told apart by the context it received, or
		// by one derived from it, which the pool recognises by its value.
		for _, derive := range []bool{false, true} {
			name := tc.name + " with the context the job received"
			if derive {
				name = tc.name + " with a context derived from it"
			}
			t.Run(name, func(t *testing.T) {
				p := crew.NewGroup(1, tc.opts...)
				var ran atomic.Int32
				var spawn func(depth int) crew.Job
				spawn = func(depth int) crew.Job {
					return func(ctx context.Context) error {
						ran.Add(1)
						if depth == 4 {
							return nil
						}
						if derive {
							ctx = context.WithValue(ctx, depthKey{}, depth)
						}
						for range 3 {
							if err := p.Submit(ctx, spawn(depth+1)); err != nil {
								return err
							}
						}
						return nil
					}
				}
				require.NoError(t, p.Submit(context.Background(), spawn(0)))
				require.NoError(t, p.Wait())
				assert.EqualValues(t, 1+3+9+27+81, ran.Load())
				s := p.Stats()
				assert.EqualValues(t, 121, s.Completed)
				assert.Positive(t, s.Inline, "some children found the pool full")
			})
		}
	}
}

// depthKey is a context key of TestNestedSubmitOnASaturatedPoolFinishes.
type depthKey struct{}

func TestJobsMaySubmitMoreAfterWaitBegan(t *testing.T) {
	p := crew.NewGroup(2)
	var child atomic.Bool
	require.NoError(t, p.Submit(context.Background(), func(ctx context.Context) error {
		for !crew.PoolClosed(p) { // no t.Fatal from a job's goroutine: Wait ends this
			runtime.Gosched()
		}
		return p.Submit(ctx, func(context.Context) error {
			child.Store(true)
			return nil
		})
	}))
	require.NoError(t, p.Wait())
	assert.True(t, child.Load(), "Wait waited for the job's child")
	assert.ErrorIs(t, p.Submit(context.Background(), func(context.Context) error { return nil }), crew.ErrPoolClosed)
}

func TestEveryJobRunsExactlyOnce(t *testing.T) {
	const n, submitters = 100_000, 8
	seen := make([]atomic.Int32, n)
	p := crew.NewPool(8, func(_ context.Context, v int) error {
		seen[v].Add(1)
		return nil
	})
	var wg sync.WaitGroup
	for s := range submitters {
		wg.Go(func() {
			for v := s; v < n; v += submitters {
				if err := p.Submit(context.Background(), v); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, p.Wait())
	for v := range seen {
		if got := seen[v].Load(); got != 1 {
			t.Fatalf("job %d ran %d times", v, got)
		}
	}
	s := p.Stats()
	assert.EqualValues(t, n, s.Submitted)
	assert.EqualValues(t, n, s.Completed)
	assert.Zero(t, s.Queued+s.Running)
	var handled int64
	for _, w := range s.PerWorker {
		handled += w.Handled
	}
	assert.EqualValues(t, n, handled)
}

func TestWaitLeavesNoGoroutine(t *testing.T) {
	ignore := goleak.IgnoreCurrent() // the goroutines of earlier tests are theirs
	p := crew.NewGroup(16)
	for range 100 {
		require.NoError(t, p.Submit(context.Background(), func(context.Context) error { return nil }))
	}
	require.NoError(t, p.Wait())
	goleak.VerifyNone(t, ignore)
}

// runtime.Goexit in a job (t.FailNow inside a job does it) fails the job
// and ends its goroutine, never the worker: a new goroutine takes the
// worker on, so the pool keeps its size, and the jobs after it run.
func TestAJobThatCallsGoexitFailsButNeverShrinksThePool(t *testing.T) {
	exit := func(context.Context) error { runtime.Goexit(); return nil }
	for _, inBatch := range []bool{false, true} {
		name := map[bool]string{false: "the pool's own job", true: "a batch's job"}[inBatch]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := &metered{}
				p := crew.NewGroup(1, crew.WithMetrics(m))
				b, _ := p.NewBatch(context.Background())
				submit := p.Submit
				if inBatch {
					submit = b.Submit
				}
				require.NoError(t, submit(context.Background(), exit))
				synctest.Wait() // the job ended; a new goroutine waits for the next
				s := p.Stats()
				assert.EqualValues(t, 1, s.Replaced)
				assert.Equal(t, 1, crew.PoolIdle(p), "the pool's worker, on a new goroutine, waits for a job")

				var ran atomic.Int32
				for range 50 {
					require.NoError(t, p.Submit(context.Background(), func(context.Context) error { ran.Add(1); return nil }))
				}
				failed, other := b.Wait(), p.Wait()
				if !inBatch {
					failed, other = other, failed
				}
				require.ErrorIs(t, failed, crew.ErrGoexit)
				assert.EqualError(t, failed, "crew: job called runtime.Goexit")
				assert.NoError(t, other)
				assert.EqualValues(t, 50, ran.Load())
				s = p.Stats()
				assert.EqualValues(t, 51, s.Completed)
				assert.EqualValues(t, 1, s.Failed)
				assert.Zero(t, s.Dropped)
				assert.EqualValues(t, 1, m.only(t).count(crew.EventReplaced))
			})
		})
	}
}

func TestBadInputPanicsWithACrewMessage(t *testing.T) {
	handle := func(context.Context, int) error { return nil }
	assert.PanicsWithValue(t, "crew: NewPool: workers must be between 1 and 16777216, got 0", func() { crew.NewPool(0, handle) })
	assert.PanicsWithValue(t, "crew: NewPool: nil handler", func() { crew.NewPool[int](1, nil) })
	assert.PanicsWithValue(t, "crew: NewGroup: workers must be between 1 and 16777216, got -1", func() { crew.NewGroup(-1) })
	assert.PanicsWithValue(t, "crew: WithQueueSize: n must be at least 0, got -1", func() { crew.WithQueueSize(-1) })
	var noContext context.Context
	assert.PanicsWithValue(t, "crew: WithParent: nil context", func() { crew.WithParent(noContext) })
	assert.PanicsWithValue(t, "crew: WithContext: nil context", func() { crew.WithContext(noContext, 1) })
	p := crew.NewGroup(1)
	assert.PanicsWithValue(t, "crew: Submit: nil job", func() { _ = p.Submit(context.Background(), nil) })
	assert.PanicsWithValue(t, "crew: TrySubmit: nil job", func() { p.TrySubmit(nil) })
	require.NoError(t, p.Wait())
}

func TestPoolStrategyAndStatsShowTheBalance(t *testing.T) {
	p := crew.NewPool(4, func(context.Context, int) error { return nil },
		crew.WithStrategy(crew.RoundRobin()), crew.WithName("even"))
	for v := range 400 {
		require.NoError(t, p.Submit(context.Background(), v))
	}
	require.NoError(t, p.Wait())
	s := p.Stats()
	assert.Equal(t, 4, s.Workers)
	require.Len(t, s.PerWorker, 4)
	var total int64
	for i, w := range s.PerWorker {
		assert.Equal(t, fmt.Sprintf("even-%d", i), w.Name)
		total += w.Handled
	}
	assert.EqualValues(t, 400, total)
	assert.Equal(t, "even", p.Name())
}

func TestPriorityPoolRunsUrgentJobsFirst(t *testing.T) {
	var order []int
	started, release := make(chan struct{}), gateFor(t)
	p := crew.NewPool(1, func(_ context.Context, v int) error {
		if v < 0 {
			close(started)
			<-release
			return nil
		}
		order = append(order, v)
		return nil
	}, crew.WithMailbox(func() crew.Mailbox[int] { return crew.NewPriority(byValue) }))
	ctx := context.Background()
	require.NoError(t, p.Submit(ctx, -1))
	<-started
	for _, v := range []int{5, 1, 4, 2, 3} {
		require.NoError(t, p.Submit(ctx, v))
	}
	close(release)
	require.NoError(t, p.Wait())
	assert.Equal(t, []int{1, 2, 3, 4, 5}, order)
}

func TestWorkersCarryProfilerLabels(t *testing.T) {
	started, release := make(chan struct{}), gateFor(t)
	p := crew.NewGroup(1, crew.WithName("thumbnails"))
	require.NoError(t, p.Submit(context.Background(), func(context.Context) error {
		close(started)
		<-release
		return nil
	}))
	<-started
	var buf bytes.Buffer
	require.NoError(t, pprof.Lookup("goroutine").WriteTo(&buf, 1))
	close(release)
	require.NoError(t, p.Wait())
	assert.Contains(t, buf.String(), `"crew.pool":"thumbnails"`)
	assert.Contains(t, buf.String(), `"crew.worker":"0"`)
}

func TestNoJobWaitsBehindASlowOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Whatever the strategy, while worker 0 runs the slow job the other
		// worker runs every job submitted after it.
		slow, release := make(chan struct{}), gateFor(t)
		var fast atomic.Int32
		p := crew.NewPool(2, func(_ context.Context, v int) error {
			if v == 0 {
				close(slow)
				<-release
				return nil
			}
			fast.Add(1)
			return nil
		}, crew.WithStrategy(crew.RoundRobin()), crew.WithQueueSize(50))
		require.NoError(t, p.Submit(context.Background(), 0))
		<-slow
		for v := 1; v <= 40; v++ {
			require.NoError(t, p.Submit(context.Background(), v))
		}
		synctest.Wait()
		require.EqualValues(t, 40, fast.Load(), "jobs waited behind the slow one")
		close(release)
		require.NoError(t, p.Wait())
	})
}

func TestMapReturnsResultsInInputOrder(t *testing.T) {
	inputs := make([]int, 1000)
	for i := range inputs {
		inputs[i] = i
	}
	out, err := crew.Map(context.Background(), 8, inputs, func(_ context.Context, v int) (string, error) {
		return fmt.Sprint(v * v), nil
	})
	require.NoError(t, err)
	require.Len(t, out, 1000)
	for i, s := range out {
		require.Equal(t, fmt.Sprint(i*i), s)
	}
	none, err := crew.Map(context.Background(), 8, nil, func(context.Context, int) (int, error) { return 0, nil })
	require.NoError(t, err)
	assert.Empty(t, none)
}

func TestMapStopsAtTheFirstError(t *testing.T) {
	bad := errors.New("bad input")
	var calls atomic.Int32
	inputs := make([]int, 10_000)
	out, err := crew.Map(context.Background(), 2, inputs, func(ctx context.Context, _ int) (int, error) {
		if calls.Add(1) == 10 {
			return 0, bad
		}
		return 1, ctx.Err()
	})
	assert.Same(t, bad, err)
	assert.Len(t, out, len(inputs), "beside the error, the results so far")
	assert.Less(t, calls.Load(), int32(len(inputs)), "inputs after the error were skipped")
}

func TestMapReportsItsContextEnding(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, err := crew.Map(ctx, 2, []int{1, 2, 3}, func(context.Context, int) (int, error) { return 1, nil })
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, []int{0, 0, 0}, out, "no input ran")
	assert.PanicsWithValue(t, "crew: Map: WithMailbox does not apply", func() {
		_, _ = crew.Map(context.Background(), 1, []int{1}, func(context.Context, int) (int, error) { return 1, nil },
			crew.WithMailbox(func() crew.Mailbox[int] { return crew.NewUnbounded[int]() }))
	})
}

func TestPoolWithAMailboxThatDropsOrRefuses(t *testing.T) {
	t.Run("DropOldest evicts to the dead letters", func(t *testing.T) {
		var dead letters
		handle, started, release := holdFirst()
		p := crew.NewPool(1, handle,
			crew.WithMailbox(func() crew.Mailbox[int] { return crew.NewBounded[int](1, crew.DropOldest) }),
			crew.WithDeadLetters(dead.sink))
		ctx := context.Background()
		require.NoError(t, p.Submit(ctx, 0))
		<-started
		require.NoError(t, p.Submit(ctx, 1))
		require.NoError(t, p.Submit(ctx, 2)) // evicts 1
		close(release)
		require.NoError(t, p.Wait())
		assert.Equal(t, []int{1}, dead.messages())
		s := p.Stats()
		assert.EqualValues(t, 1, s.Dropped)
		assert.EqualValues(t, 2, s.Completed)
		assert.EqualValues(t, 3, s.Submitted)
	})
	t.Run("Fail returns ErrMailboxFull to Submit", func(t *testing.T) {
		handle, started, release := holdFirst()
		p := crew.NewPool(1, handle,
			crew.WithMailbox(func() crew.Mailbox[int] { return crew.NewBounded[int](1, crew.Fail) }))
		ctx := context.Background()
		require.NoError(t, p.Submit(ctx, 0))
		<-started
		require.NoError(t, p.Submit(ctx, 1))
		assert.ErrorIs(t, p.Submit(ctx, 2), crew.ErrMailboxFull)
		assert.False(t, p.TrySubmit(3))
		close(release)
		require.NoError(t, p.Wait())
		assert.EqualValues(t, 2, p.Stats().Submitted)
	})
}

func TestAdmissionStaysExactUnderCancellations(t *testing.T) {
	// Submitters race a full pool with contexts that end at random; every
	// Submit that returned nil must have run, and no other.
	const submitters, each = 8, 2000
	var ran atomic.Int64
	p := crew.NewPool(4, func(context.Context, int) error {
		ran.Add(1)
		return nil
	}, crew.WithQueueSize(1))
	var accepted atomic.Int64
	var wg sync.WaitGroup
	for s := range submitters {
		wg.Go(func() {
			for i := range each {
				ctx, cancel := context.WithCancel(context.Background())
				switch (s + i) % 3 {
				case 0:
					cancel()
				case 1:
					go cancel()
				}
				if p.Submit(ctx, i) == nil {
					accepted.Add(1)
				}
				cancel()
			}
		})
	}
	wg.Wait()
	require.NoError(t, p.Wait())
	assert.Equal(t, accepted.Load(), ran.Load())
	s := p.Stats()
	assert.Equal(t, accepted.Load(), s.Submitted)
	assert.Equal(t, accepted.Load(), s.Completed)
	assert.Zero(t, crew.PoolBlocked(p))
	assert.Positive(t, accepted.Load())
}

func TestWaitRacesSubmit(t *testing.T) {
	// Submitters keep going until the pool refuses them; every job accepted
	// before that must have run by the time Wait returns, and none after.
	for range 20 {
		var ran, accepted atomic.Int64
		p := crew.NewPool(3, func(context.Context, int) error {
			ran.Add(1)
			return nil
		}, crew.WithQueueSize(1))
		var wg sync.WaitGroup
		going := make(chan struct{}, 4)
		for range 4 {
			wg.Go(func() {
				for i := 0; ; i++ {
					err := p.Submit(context.Background(), i)
					if err != nil {
						assert.ErrorIs(t, err, crew.ErrPoolClosed)
						return
					}
					accepted.Add(1)
					if i == 10 {
						going <- struct{}{}
					}
				}
			})
		}
		for range 4 {
			<-going
		}
		require.NoError(t, p.Wait())
		ranAtWait := ran.Load()
		wg.Wait() // the submitters have all been refused
		assert.Equal(t, accepted.Load(), ranAtWait, "every accepted job ran before Wait returned, and none after")
		assert.Equal(t, accepted.Load(), p.Stats().Submitted)
	}
}

// Chains of jobs, each submitting its successor from inside (own Submit),
// still going when Wait begins: Wait must wait for every link.
func TestWaitSeesEveryLinkOfJobChains(t *testing.T) {
	const workers, chains, depth = 16, 16, 2000
	var ran atomic.Int64
	var dropped atomic.Int64
	p := crew.NewGroup(workers, crew.WithDeadLetters(func(d crew.DeadLetter) { dropped.Add(1); t.Logf("dead letter: %v", d.Reason) }))
	var link func(d int) crew.Job
	link = func(d int) crew.Job {
		return func(ctx context.Context) error {
			ran.Add(1)
			if d == 0 {
				return nil
			}
			return p.Submit(ctx, link(d-1))
		}
	}
	for range chains {
		if err := p.Submit(context.Background(), link(depth)); err != nil {
			t.Fatal(err)
		}
	}
	err := p.Wait()
	s := p.Stats()
	if err != nil || ran.Load() != chains*(depth+1) {
		t.Fatalf("Wait returned %v with %d of %d links run; dead letters %d; stats %+v",
			err, ran.Load(), chains*(depth+1), dropped.Load(), s)
	}
}

// A job fans out to goroutines of its own that Submit with the job's
// context (the errgroup pattern the docs allow). On a full pool those
// Submits run inline on those goroutines; Stats must still count them all.
func TestStatsCountInlineJobsOfJobGoroutines(t *testing.T) {
	const fan, each = 8, 2000
	var ran atomic.Int64
	p := crew.NewGroup(1, crew.WithQueueSize(1))
	noop := func(context.Context) error { ran.Add(1); return nil }
	if err := p.Submit(context.Background(), func(ctx context.Context) error {
		ran.Add(1)
		var wg sync.WaitGroup
		for range fan {
			wg.Go(func() {
				for range each {
					if err := p.Submit(ctx, noop); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	s := p.Stats()
	if s.Completed != ran.Load() || s.Submitted != ran.Load() {
		t.Fatalf("ran %d jobs, Stats says Completed %d Submitted %d Inline %d", ran.Load(), s.Completed, s.Submitted, s.Inline)
	}
}

// Submitters race workers whose jobs call runtime.Goexit: every Submit
// is accepted, every job runs and fails, and every worker's goroutine
// that a job ended is replaced; nothing panics or hangs.
func TestSubmitWhileEveryJobCallsGoexit(t *testing.T) {
	exit := func(context.Context) error { runtime.Goexit(); return nil }
	for range 3000 {
		p := crew.NewGroup(2, crew.WithQueueSize(1))
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 4 {
					if err := p.Submit(context.Background(), exit); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		if !assert.ErrorIs(t, p.Wait(), crew.ErrGoexit) {
			return
		}
		s := p.Stats()
		if !assert.Equal(t, [3]int64{32, 32, 32}, [3]int64{s.Completed, s.Failed, s.Replaced}) {
			return
		}
	}
}

func TestSubmitDoesNotAllocatePerJob(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	// One worker and one slot: the submitter blocks for most jobs, so the
	// wait list is used over and over too.
	assertSubmitsDoNotAllocate(t, crew.NewPool(1, func(context.Context, int) error { return nil }, crew.WithQueueSize(1)))
}

// assertSubmitsDoNotAllocate submits 20,000 no-op jobs to p, waits for it,
// and checks that they allocated less than once in 1,000 jobs.
func assertSubmitsDoNotAllocate(t *testing.T, p *crew.Pool[int]) {
	t.Helper()
	ctx := context.Background()
	const jobs = 20_000
	allocs := testing.AllocsPerRun(1, func() {
		for v := range jobs {
			_ = p.Submit(ctx, v)
		}
	})
	require.NoError(t, p.Wait())
	assert.Less(t, allocs/jobs, 0.001, "%v allocations for %d jobs", allocs, jobs)
}
