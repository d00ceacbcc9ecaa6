package crew_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sourcegraph/conc/panics"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// logger records the callbacks a stream ran, and checks that they ran one
// at a time.
type logger struct {
	t       *testing.T
	running atomic.Int64
	ran     []int // written by the callbacks, one at a time
	at      []time.Duration
	start   time.Time
}

// task returns a stream task for item i that runs for d, then returns
// err, or a callback that logs i and returns cbErr.
func (l *logger) task(i int, d time.Duration, err, cbErr error) crew.StreamTask {
	return func(ctx context.Context) (func() error, error) {
		time.Sleep(d)
		if err != nil {
			return nil, err
		}
		return func() error {
			if l.running.Add(1) != 1 {
				l.t.Errorf("callback %d ran beside another", i)
			}
			runtime.Gosched()
			l.ran = append(l.ran, i)
			l.at = append(l.at, time.Since(l.start))
			l.running.Add(-1)
			return cbErr
		}, nil
	}
}

// busyFairPool returns a pool of 6 workers WithFairShare, kept busy by a
// noisy tenant's batch of 200 jobs of a millisecond, and that batch.
func busyFairPool(t *testing.T) (*crew.Pool[crew.Job], *crew.Batch[crew.Job]) {
	p := crew.NewGroup(6, crew.WithFairShare())
	noisy, _ := p.NewBatch(t.Context(), crew.WithTenant("noisy"))
	for range 200 {
		require.NoError(t, noisy.Submit(t.Context(), func(context.Context) error {
			time.Sleep(time.Millisecond)
			return nil
		}))
	}
	return p, noisy
}

// A peak counts the calls running at once, and the most there were.
type peak struct{ running, most atomic.Int64 }

// enter counts a call in, and returns what counts it out.
func (p *peak) enter() func() {
	n := p.running.Add(1)
	for m := p.most.Load(); n > m && !p.most.CompareAndSwap(m, n); m = p.most.Load() {
	}
	return func() { p.running.Add(-1) }
}

func TestAStreamRunsEachCallbackInOrderAsSoonAsItsTaskAndThoseBeforeEnded(t *testing.T) {
	for _, form := range []string{"NewStream", "NewStreamBatch"} {
		t.Run(form, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const n, workers = 300, 4
				rng := rand.New(rand.NewPCG(3, 4))
				took := make([]time.Duration, n)
				for i := range took {
					took[i] = time.Duration(rng.IntN(50)) * time.Millisecond
				}
				var s *crew.Stream
				if form == "NewStream" {
					s = crew.NewStream(t.Context(), workers, crew.WithWindow(n))
				} else {
					p := crew.NewGroup(workers, crew.WithQueueSize(n))
					defer p.Wait()
					s = crew.NewStreamBatch(t.Context(), p, crew.WithWindow(n))
				}
				l := &logger{t: t, start: time.Now()}
				for i := range n {
					require.NoError(t, s.Submit(t.Context(), l.task(i, took[i], nil, nil)))
				}
				require.NoError(t, s.Wait())
				require.Len(t, l.ran, n)
				// As in MapSeq's test: the workers take the tasks in order,
				// and each callback runs at the latest end of its task and
				// those before it.
				free := make([]time.Duration, workers)
				var ready time.Duration
				for i := range n {
					require.Equal(t, i, l.ran[i])
					w := slices.Index(free, slices.Min(free))
					free[w] += took[i]
					ready = max(ready, free[w])
					assert.Equal(t, ready, l.at[i], "callback %d", i)
				}
			})
		})
	}
}

func TestAStreamsSubmitBlocksWhileItsWindowIsFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const window = 6
		s := crew.NewStream(t.Context(), 3, crew.WithWindow(window))
		release := make(chan struct{})
		var accepted atomic.Int64
		ctx, cancel := context.WithCancel(t.Context())
		refused := make(chan error, 1)
		go func() {
			for i := range 100 {
				err := s.Submit(ctx, func(context.Context) (func() error, error) {
					if i == 0 {
						<-release // a slow first task: the callbacks wait for it
					}
					return nil, nil
				})
				if err != nil {
					refused <- err
					return
				}
				accepted.Add(1)
			}
			refused <- nil
		}()
		synctest.Wait()
		assert.EqualValues(t, window, accepted.Load(), "tasks accepted behind a slow first one")
		cancel() // the blocked Submit honours its context
		require.ErrorIs(t, <-refused, context.Canceled)
		close(release)
		require.NoError(t, s.Wait())
	})
}

func TestAStreamsFirstErrorStopsTheCallbacksFromItsTaskOn(t *testing.T) {
	boom := errors.New("boom")
	for name, fails := range map[string]func() (func() error, error){
		"error":  func() (func() error, error) { return nil, boom },
		"panic":  func() (func() error, error) { panic(boom) },
		"Goexit": func() (func() error, error) { runtime.Goexit(); return nil, nil },
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := crew.NewStream(t.Context(), 30, crew.WithWindow(32))
				l := &logger{t: t, start: time.Now()}
				var ran atomic.Int64
				var submitErr error
				for i := range 1000 {
					task := l.task(i, 5*time.Millisecond, nil, nil) // the tasks before the failure end after it: their callbacks still run
					if i == 20 {
						task = func(context.Context) (func() error, error) {
							time.Sleep(time.Millisecond)
							return fails()
						}
					} else if i > 20 {
						task = l.task(i, time.Millisecond, nil, nil)
					}
					if submitErr = s.Submit(t.Context(), func(ctx context.Context) (func() error, error) {
						ran.Add(1)
						return task(ctx)
					}); submitErr != nil {
						break
					}
				}
				err := s.Wait()
				if name == "Goexit" {
					require.ErrorContains(t, submitErr, "runtime.Goexit", "Submit refuses tasks with the first error")
					require.ErrorIs(t, err, crew.ErrGoexit)
				} else {
					require.ErrorIs(t, submitErr, boom, "Submit refuses tasks with the first error")
					require.ErrorIs(t, err, boom)
				}
				if name == "panic" {
					var rec *panics.ErrRecovered
					require.ErrorAs(t, err, &rec)
				}
				want := make([]int, 20)
				for i := range want {
					want[i] = i
				}
				assert.Equal(t, want, l.ran)
				assert.Less(t, ran.Load(), int64(20+32+1), "tasks run")
			})
		})
	}
}

func TestAStreamsFailingCallbackIsTheLastToRun(t *testing.T) {
	boom := errors.New("boom")
	for name, cb := range map[string]func() error{
		"error":  func() error { return boom },
		"panic":  func() error { panic(boom) },
		"Goexit": func() error { runtime.Goexit(); return nil },
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := crew.NewStream(t.Context(), 4)
				l := &logger{t: t, start: time.Now()}
				for i := range 100 {
					task := l.task(i, time.Millisecond, nil, nil)
					if i == 6 {
						task = l.task(i, 3*time.Millisecond, nil, nil) // ends after callback 5 failed
					}
					if i == 5 {
						task = func(context.Context) (func() error, error) {
							time.Sleep(time.Millisecond)
							return cb, nil
						}
					}
					if s.Submit(t.Context(), task) != nil {
						break
					}
				}
				err := s.Wait()
				require.Error(t, err)
				switch name {
				case "Goexit":
					assert.ErrorIs(t, err, crew.ErrGoexit)
				default:
					assert.ErrorIs(t, err, boom)
				}
				assert.Equal(t, []int{0, 1, 2, 3, 4}, l.ran)
			})
		})
	}
}

func TestAStreamStopsWhenItsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		whyNot := errors.New("the client went away")
		ctx, cancel := context.WithCancelCause(t.Context())
		defer cancel(nil)
		s := crew.NewStream(ctx, 2)
		var got []int
		var err error
		for i := 0; err == nil; i++ {
			err = s.Submit(t.Context(), func(ctx context.Context) (func() error, error) {
				select {
				case <-time.After(time.Millisecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return func() error {
					got = append(got, i)
					if i == 9 {
						cancel(whyNot)
					}
					return nil
				}, nil
			})
		}
		assert.ErrorIs(t, err, whyNot)
		assert.ErrorIs(t, s.Wait(), whyNot)
		require.GreaterOrEqual(t, len(got), 10)
		for i, g := range got {
			require.Equal(t, i, g)
		}
	})
}

func TestAStreamOnABatchOfAFairPool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, noisy := busyFairPool(t)
		s := crew.NewStreamBatch(t.Context(), p, crew.WithLimit(2), crew.WithTenant("stream"))
		l := &logger{t: t, start: time.Now()}
		var running peak
		for i := range 100 {
			task := l.task(i, time.Duration(100-i)*10*time.Microsecond, nil, nil)
			require.NoError(t, s.Submit(t.Context(), func(ctx context.Context) (func() error, error) {
				defer running.enter()()
				return task(ctx)
			}))
		}
		require.NoError(t, s.Wait())
		require.Len(t, l.ran, 100)
		for i, g := range l.ran {
			require.Equal(t, i, g)
		}
		assert.EqualValues(t, 2, running.most.Load(), "the batch's limit holds")
		require.NoError(t, noisy.Wait())
		require.NoError(t, p.Wait())
	})
}

func TestAStreamRefusesTasksOnceWaited(t *testing.T) {
	s := crew.NewStream(t.Context(), 2)
	require.NoError(t, s.Submit(t.Context(), func(context.Context) (func() error, error) { return nil, nil }))
	require.NoError(t, s.Wait())
	require.NoError(t, s.Wait(), "a second Wait returns the same")
	assert.ErrorIs(t, s.Submit(t.Context(), func(context.Context) (func() error, error) { return nil, nil }), crew.ErrBatchClosed)

	p := crew.NewGroup(2)
	sb := crew.NewStreamBatch(t.Context(), p)
	require.NoError(t, p.Wait())
	assert.ErrorIs(t, sb.Submit(t.Context(), func(context.Context) (func() error, error) { return nil, nil }), crew.ErrPoolClosed)
	assert.ErrorIs(t, sb.Wait(), crew.ErrPoolClosed, "a task was refused: Wait says why, as MapBatch does")
}

func TestAStreamRefusesBadArguments(t *testing.T) {
	var nilCtx context.Context
	panicsWithCrewPrefix(t, func() { crew.NewStream(nilCtx, 1) })
	panicsWithCrewPrefix(t, func() { crew.NewStream(t.Context(), 0) })
	panicsWithCrewPrefix(t, func() { crew.NewStream(t.Context(), 1, crew.WithAllErrors()) })
	panicsWithCrewPrefix(t, func() { crew.NewStreamBatch(t.Context(), nil) })
	panicsWithCrewPrefix(t, func() { crew.NewStreamBatch(t.Context(), &crew.Pool[crew.Job]{}) })
	var zero crew.Stream
	panicsWithCrewPrefix(t, func() { _ = zero.Submit(t.Context(), func(context.Context) (func() error, error) { return nil, nil }) })
	panicsWithCrewPrefix(t, func() { _ = zero.Wait() })
	var none *crew.Stream
	panicsWithCrewPrefix(t, func() { _ = none.Submit(t.Context(), func(context.Context) (func() error, error) { return nil, nil }) })
	panicsWithCrewPrefix(t, func() { _ = none.Wait() })
	p := crew.NewGroup(1)
	defer p.Wait()
	panicsWithCrewPrefix(t, func() { crew.NewStreamBatch(nilCtx, p) })
	s := crew.NewStreamBatch(t.Context(), p)
	defer s.Wait()
	panicsWithCrewPrefix(t, func() { _ = s.Submit(nilCtx, func(context.Context) (func() error, error) { return nil, nil }) })
	panicsWithCrewPrefix(t, func() { _ = s.Submit(t.Context(), nil) })
}

func TestABlockedSubmitWaitsForAQuarterOfTheWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const window = 8
		s := crew.NewStream(t.Context(), window, crew.WithWindow(window))
		gates := make([]chan struct{}, 20)
		for i := range gates {
			gates[i] = make(chan struct{})
		}
		var accepted atomic.Int64
		submitted := make(chan struct{})
		go func() {
			defer close(submitted)
			for i := range gates {
				if s.Submit(t.Context(), func(context.Context) (func() error, error) {
					<-gates[i]
					return nil, nil
				}) != nil {
					return
				}
				accepted.Add(1)
			}
		}()
		synctest.Wait()
		require.EqualValues(t, window, accepted.Load())
		close(gates[0]) // one place free: the blocked Submit sleeps on
		synctest.Wait()
		assert.EqualValues(t, window, accepted.Load())
		close(gates[1]) // a quarter of the window: it goes on, and fills it again
		synctest.Wait()
		assert.EqualValues(t, window+2, accepted.Load())
		for _, g := range gates[2:] {
			close(g)
		}
		<-submitted
		require.NoError(t, s.Wait())
		assert.EqualValues(t, len(gates), accepted.Load())
	})
}

func TestAStreamsSubmitWaitingForItsTurnHonoursItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := crew.NewStream(t.Context(), 2, crew.WithWindow(2))
		release := make(chan struct{})
		slow := func(context.Context) (func() error, error) { <-release; return nil, nil }
		require.NoError(t, s.Submit(t.Context(), slow))
		require.NoError(t, s.Submit(t.Context(), slow))
		first := make(chan error)
		go func() { first <- s.Submit(t.Context(), slow) }() // waits for room, holding the turn
		synctest.Wait()
		ctx, cancel := context.WithCancel(t.Context())
		second := make(chan error)
		go func() { second <- s.Submit(ctx, slow) }() // waits for the turn
		synctest.Wait()
		cancel()
		assert.ErrorIs(t, <-second, context.Canceled)
		close(release)
		assert.NoError(t, <-first)
		require.NoError(t, s.Wait())
	})
}

func TestAStreamTakesTasksFromManyGoroutines(t *testing.T) {
	const goroutines, each = 8, 300
	s := crew.NewStream(t.Context(), 4, crew.WithWindow(5))
	var ran [goroutines * each]atomic.Int32
	var order []int // appended by the callbacks without a lock: -race checks that they run one at a time
	last := make([]int, goroutines)
	for i := range last {
		last[i] = -1
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				require.NoError(t, s.Submit(t.Context(), func(context.Context) (func() error, error) {
					return func() error {
						ran[g*each+i].Add(1)
						if i <= last[g] {
							t.Errorf("goroutine %d: task %d's callback ran after task %d's", g, i, last[g])
						}
						last[g] = i
						order = append(order, g)
						return nil
					}, nil
				}))
			}
		})
	}
	wg.Wait()
	require.NoError(t, s.Wait())
	for i := range ran {
		require.EqualValues(t, 1, ran[i].Load(), "task %d", i)
	}
	assert.Len(t, order, goroutines*each)
}
