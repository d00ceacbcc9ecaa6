package crew_test

import (
	"context"
	"errors"
	"iter"
	"math/rand/v2"
	"runtime"
	"slices"
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

// A pair is what an ordered stream yields.
type pair[R any] struct {
	r   R
	err error
}

// gather ranges over seq and returns what it yielded.
func gather[R any](seq iter.Seq2[R, error]) []pair[R] {
	var got []pair[R]
	for r, err := range seq {
		got = append(got, pair[R]{r, err})
	}
	return got
}

// counting returns the inputs 0 to n-1, counting in read those read.
func counting(n int, read *atomic.Int64) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := range n {
			read.Add(1)
			if !yield(i) {
				return
			}
		}
	}
}

// double is f for streams of ints whose results are checked.
func double(_ context.Context, i int) (int, error) { return 2 * i, nil }

func TestMapSeqYieldsEachResultInInputOrderAsSoonAsItAndThoseBeforeAreReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 300
		rng := rand.New(rand.NewPCG(1, 2))
		took := make([]time.Duration, n)
		for i := range took {
			took[i] = time.Duration(rng.IntN(50)) * time.Millisecond
		}
		// Each result is ready once its input and every one before it
		// ended: the time the loop sees it, if it is yielded at once.
		start := time.Now()
		var read atomic.Int64
		seq := crew.MapSeq(t.Context(), 4, counting(n, &read), func(_ context.Context, i int) (int, error) {
			time.Sleep(took[i])
			return 2 * i, nil
		}, crew.WithWindow(n)) // so that the inputs start as in a pool
		i := 0
		var at []time.Duration
		for r, err := range seq {
			require.NoError(t, err)
			require.Equal(t, 2*i, r)
			at = append(at, time.Since(start))
			i++
		}
		require.Equal(t, n, i)
		// In a pool of 4 workers, taking inputs in order, input i ends at
		// its start plus its time; the stream yields it at the latest end
		// of it and those before it.
		ends := make([]time.Duration, n)
		free := make([]time.Duration, 4)
		var ready time.Duration
		for i := range n {
			w := slices.Index(free, slices.Min(free))
			free[w] += took[i]
			ends[i] = free[w]
			ready = max(ready, ends[i])
			assert.Equal(t, ready, at[i], "result %d", i)
		}
	})
}

func TestMapSeqReadsAtMostTheWindowAheadOfTheOldestResultNotYielded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, window := range []int{1, 3, 8, 20} {
			var read, ran atomic.Int64
			release := make(chan struct{})
			seq := crew.MapSeq(t.Context(), 4, counting(1000, &read), func(_ context.Context, i int) (int, error) {
				ran.Add(1)
				if i == 0 {
					<-release // a slow first input
				}
				return i, nil
			}, crew.WithWindow(window))
			done := make(chan []pair[int])
			go func() { done <- gather(seq) }()
			synctest.Wait()
			assert.EqualValues(t, window, read.Load(), "window %d: inputs read behind a slow first one", window)
			assert.EqualValues(t, window, ran.Load(), "window %d: inputs run", window)
			close(release)
			got := <-done
			require.Len(t, got, 1000)
			for i, p := range got {
				require.NoError(t, p.err)
				require.Equal(t, i, p.r)
			}
		}
	})
}

func TestMapSeqsDefaultWindowIsAFewInputsPerWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var read atomic.Int64
		release := make(chan struct{})
		seq := crew.MapSeq(t.Context(), 3, counting(1000, &read), func(_ context.Context, i int) (int, error) {
			if i == 0 {
				<-release
			}
			return i, nil
		})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for range seq {
			}
		}()
		synctest.Wait()
		assert.EqualValues(t, crew.DefaultWindowPerWorker*3, read.Load())
		close(release)
		<-done
	})
}

func TestBreakingOutOfMapSeqCancelsWhatRunsAndLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t)
	var read, started, canceled atomic.Int64
	inputsEnded := false
	inputs := func(yield func(int) bool) {
		defer func() { inputsEnded = true }()
		counting(1_000_000, &read)(yield)
	}
	seq := crew.MapSeq(t.Context(), 4, inputs, func(ctx context.Context, i int) (int, error) {
		started.Add(1)
		if i < 3 {
			return i, nil
		}
		<-ctx.Done() // runs until the loop breaks
		canceled.Add(1)
		return 0, ctx.Err()
	}, crew.WithWindow(16))
	var got []int
	for r, err := range seq {
		require.NoError(t, err)
		got = append(got, r)
		if len(got) == 3 {
			break
		}
	}
	// Every call has returned once the loop is over, and no goroutine is
	// left (goleak, above).
	assert.Equal(t, []int{0, 1, 2}, got)
	assert.True(t, inputsEnded, "the inputs' iterator returned")
	assert.Equal(t, started.Load()-3, canceled.Load(), "every call still running saw its context canceled")
	assert.LessOrEqual(t, read.Load(), int64(3+16), "inputs read: at most the window past the last result")
}

func TestMapSeqYieldsTheFirstFailureInItsPlaceAndStops(t *testing.T) {
	boom := errors.New("boom")
	for name, fail := range map[string]func() (int, error){
		"error":  func() (int, error) { return 0, boom },
		"panic":  func() (int, error) { panic(boom) },
		"Goexit": func() (int, error) { runtime.Goexit(); return 0, nil },
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var read, ran atomic.Int64
				seq := crew.MapSeq(t.Context(), 30, counting(1000, &read), func(ctx context.Context, i int) (int, error) {
					ran.Add(1)
					switch {
					case i == 20:
						time.Sleep(time.Millisecond) // the first to fail, first in time
						return fail()
					case i < 20:
						time.Sleep(5 * time.Millisecond) // ends after 20 failed: still yielded
						return i, nil
					}
					time.Sleep(time.Millisecond)
					return i, ctx.Err()
				}, crew.WithWindow(32))
				got := gather(seq)
				require.Len(t, got, 21)
				for i, p := range got[:20] {
					require.NoError(t, p.err)
					require.Equal(t, i, p.r)
				}
				last := got[20]
				assert.Zero(t, last.r)
				if name == "Goexit" {
					require.ErrorIs(t, last.err, crew.ErrGoexit)
				} else {
					require.ErrorIs(t, last.err, boom)
				}
				if name == "panic" {
					var rec *panics.ErrRecovered
					require.ErrorAs(t, last.err, &rec)
					assert.Contains(t, string(rec.Stack), "TestMapSeqYieldsTheFirstFailureInItsPlaceAndStops")
				}
				assert.Less(t, read.Load(), int64(1000), "inputs read after the failure")
				assert.Less(t, ran.Load(), int64(20+32), "inputs run after the failure")
			})
		})
	}
}

func TestMapSeqReportsAnInputStoppedByTheFirstErrorWithThatError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("boom")
		var read atomic.Int64
		seq := crew.MapSeq(t.Context(), 4, counting(100, &read), func(ctx context.Context, i int) (int, error) {
			switch i {
			case 1: // stops when 2 fails, and says only that its context ended
				<-ctx.Done()
				return 0, ctx.Err()
			case 2:
				return 0, boom
			}
			return i, nil
		})
		got := gather(seq)
		require.Len(t, got, 2)
		assert.Equal(t, pair[int]{0, nil}, got[0])
		assert.ErrorIs(t, got[1].err, boom)
	})
}

func TestMapSeqStopsWhenItsContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		whyNot := errors.New("the client went away")
		ctx, cancel := context.WithCancelCause(t.Context())
		defer cancel(nil)
		var read atomic.Int64
		seq := crew.MapSeq(ctx, 2, counting(1000, &read), func(ctx context.Context, i int) (int, error) {
			select {
			case <-time.After(time.Millisecond):
				return i, nil
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		})
		var got []pair[int]
		for r, err := range seq {
			got = append(got, pair[int]{r, err})
			if r == 9 {
				cancel(whyNot)
			}
		}
		require.GreaterOrEqual(t, len(got), 11)
		for i, p := range got[:len(got)-1] {
			require.NoError(t, p.err)
			require.Equal(t, i, p.r)
		}
		assert.ErrorIs(t, got[len(got)-1].err, whyNot)
		assert.Less(t, read.Load(), int64(1000))
	})
}

func TestMapSeqWhoseContextEndsAfterTheLastInputSucceeds(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got := 0
	for r, err := range crew.MapSeq(ctx, 2, slices.Values([]int{1, 2, 3}), double) {
		require.NoError(t, err)
		got += r
		if got == 12 {
			cancel() // no input is left: nothing fails
		}
	}
	assert.Equal(t, 12, got)
}

func TestMapSeqCanBeRangedOverAgain(t *testing.T) {
	seq := crew.MapSeq(t.Context(), 3, slices.Values([]int{1, 2, 3, 4}), double)
	for range 3 {
		var got []int
		for r, err := range seq {
			require.NoError(t, err)
			got = append(got, r)
		}
		assert.Equal(t, []int{2, 4, 6, 8}, got)
	}
}

func TestMapSeqOfNoInputYieldsNothing(t *testing.T) {
	assert.Empty(t, gather(crew.MapSeq(t.Context(), 3, slices.Values([]int(nil)), double)))
	p := crew.NewGroup(2)
	defer p.Wait()
	assert.Empty(t, gather(crew.MapSeqBatch(t.Context(), p, slices.Values([]int(nil)), double)))
}

func TestMapSeqBatchIsOneBatchOfASharedPool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, noisy := busyFairPool(t)
		var read atomic.Int64
		var running peak
		seq := crew.MapSeqBatch(t.Context(), p, counting(100, &read), func(_ context.Context, i int) (int, error) {
			defer running.enter()()
			time.Sleep(time.Duration(100-i) * 10 * time.Microsecond)
			return 2 * i, nil
		}, crew.WithLimit(2), crew.WithTenant("stream"))
		i := 0
		for r, err := range seq {
			require.NoError(t, err)
			require.Equal(t, 2*i, r)
			i++
			if i == 1 {
				// The default window: DefaultWindowPerWorker times the
				// batch's limit, read by the time the first result is out.
				assert.LessOrEqual(t, read.Load(), int64(crew.DefaultWindowPerWorker*2))
			}
		}
		assert.Equal(t, 100, i)
		assert.EqualValues(t, 2, running.most.Load(), "the batch's limit holds")
		require.NoError(t, noisy.Wait())
		require.NoError(t, p.Wait())
	})
}

func TestMapSeqBatchOnAClosedPoolYieldsErrPoolClosed(t *testing.T) {
	p := crew.NewGroup(2)
	require.NoError(t, p.Wait())
	got := gather(crew.MapSeqBatch(t.Context(), p, slices.Values([]int{1, 2}), double))
	require.Len(t, got, 1)
	assert.ErrorIs(t, got[0].err, crew.ErrPoolClosed)
}

func TestMapSeqBatchFailureCancelsItsBatchOnly(t *testing.T) {
	boom := errors.New("boom")
	p := crew.NewGroup(2)
	other, octx := p.NewBatch(t.Context())
	got := gather(crew.MapSeqBatch(t.Context(), p, slices.Values([]int{0, 1, 2, 3}), func(_ context.Context, i int) (int, error) {
		if i == 1 {
			return 0, boom
		}
		return i, nil
	}))
	require.Len(t, got, 2)
	assert.ErrorIs(t, got[1].err, boom)
	assert.NoError(t, octx.Err())
	var ran atomic.Int64
	require.NoError(t, other.Submit(t.Context(), counted(&ran)))
	require.NoError(t, other.Wait())
	require.NoError(t, p.Wait())
	assert.EqualValues(t, 1, ran.Load())
}

func TestMapSeqRefusesBadArguments(t *testing.T) {
	in := slices.Values([]int{1})
	var nilCtx context.Context
	panicsWithCrewPrefix(t, func() { crew.MapSeq(nilCtx, 1, in, double) })
	panicsWithCrewPrefix(t, func() { crew.MapSeq(t.Context(), 0, in, double) })
	panicsWithCrewPrefix(t, func() { crew.MapSeq[int, int](t.Context(), 1, nil, double) })
	panicsWithCrewPrefix(t, func() { crew.MapSeq[int, int](t.Context(), 1, in, nil) })
	panicsWithCrewPrefix(t, func() { crew.MapSeq(t.Context(), 1, in, double, crew.WithQueueSize(3)) })
	panicsWithCrewPrefix(t, func() { crew.WithWindow(0) })
	panicsWithCrewPrefix(t, func() { crew.MapSeqBatch(t.Context(), nil, in, double) })
	panicsWithCrewPrefix(t, func() { crew.MapSeqBatch(t.Context(), &crew.Pool[crew.Job]{}, in, double) })
	p := crew.NewGroup(1)
	defer p.Wait()
	panicsWithCrewPrefix(t, func() { crew.MapSeqBatch(t.Context(), p, in, double, crew.WithAllErrors()) })
	panicsWithCrewPrefix(t, func() { crew.NewGroup(1, crew.WithWindow(3)) })
}

func TestAPanicInMapSeqsLoopEndsTheStreamAndLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t)
	var read, started, canceled atomic.Int64
	seq := crew.MapSeq(t.Context(), 4, counting(1000, &read), func(ctx context.Context, i int) (int, error) {
		started.Add(1)
		if i > 0 {
			<-ctx.Done()
			canceled.Add(1)
		}
		return i, nil
	})
	assert.PanicsWithValue(t, "in the loop", func() {
		for range seq {
			panic("in the loop")
		}
	})
	assert.Equal(t, started.Load()-1, canceled.Load(), "every call in progress was canceled, and had returned")
	assert.LessOrEqual(t, read.Load(), int64(crew.DefaultWindowPerWorker*4))
}

func TestAStreamOnASharedPoolEndsWhenThePoolSkipsItsJobs(t *testing.T) {
	// The pool skips a batch's queued jobs when the pool's context ends,
	// without canceling the batch.
	for _, form := range []string{"MapSeqBatch", "NewStreamBatch"} {
		synctest.Test(t, func(t *testing.T) {
			pctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			p := crew.NewGroup(1, crew.WithParent(pctx), crew.WithQueueSize(16))
			gate := make(chan struct{})
			require.NoError(t, p.Submit(t.Context(), func(context.Context) error {
				<-gate
				return nil
			})) // holds the only worker
			ended := make(chan error, 1)
			if form == "MapSeqBatch" {
				go func() {
					got := gather(crew.MapSeqBatch(t.Context(), p, slices.Values([]int{1, 2, 3}), double, crew.WithWindow(4)))
					ended <- got[len(got)-1].err
				}()
			} else {
				s := crew.NewStreamBatch(t.Context(), p, crew.WithWindow(2))
				go func() {
					var err error
					for err == nil { // the third Submit waits for room
						err = s.Submit(t.Context(), func(context.Context) (func() error, error) { return nil, nil })
					}
					ended <- errors.Join(err, s.Wait())
				}()
			}
			synctest.Wait()
			cancel()
			close(gate)
			synctest.Wait()
			select {
			case err := <-ended:
				assert.ErrorIs(t, err, context.Canceled, form)
			default:
				t.Fatalf("%s: still waiting for jobs the pool will never run", form)
			}
			_ = p.Wait()
		})
	}
}

func TestAPanicInMapSeqsInputsEndsTheStreamAndLeavesNoGoroutine(t *testing.T) {
	defer goleak.VerifyNone(t)
	var started, canceled atomic.Int64
	inputs := func(yield func(int) bool) {
		for i := range 10 {
			if !yield(i) {
				return
			}
		}
		panic("in the inputs")
	}
	seq := crew.MapSeq(t.Context(), 4, inputs, func(ctx context.Context, i int) (int, error) {
		started.Add(1)
		<-ctx.Done() // runs until the stream ends
		canceled.Add(1)
		return i, nil
	}, crew.WithWindow(16))
	assert.PanicsWithValue(t, "in the inputs", func() {
		for range seq {
			t.Error("no input ended before the panic")
		}
	})
	assert.Equal(t, started.Load(), canceled.Load(), "every call in progress was canceled, and had returned")
}

func TestMapSeqKeepsOrderUnderRealSchedulingWithSmallWindows(t *testing.T) {
	boom := errors.New("boom")
	for round := range 200 {
		rng := rand.New(rand.NewPCG(uint64(round), 7))
		window, workers, n := 1+rng.IntN(3), 1+rng.IntN(4), rng.IntN(300)
		failAt := -1
		if rng.IntN(3) == 0 && n > 0 {
			failAt = rng.IntN(n)
		}
		seq := crew.MapSeq(t.Context(), workers, upTo(n), func(_ context.Context, i int) (int, error) {
			if rng := i % 7; rng == 0 {
				runtime.Gosched()
			}
			if i == failAt {
				return 0, boom
			}
			return 2 * i, nil
		}, crew.WithWindow(window))
		i := 0
		for r, err := range seq {
			if i == failAt {
				require.ErrorIs(t, err, boom, "round %d", round)
				i++
				continue
			}
			require.NoError(t, err, "round %d", round)
			require.Equal(t, 2*i, r, "round %d: result %d", round, i)
			i++
		}
		if failAt >= 0 {
			require.Equal(t, failAt+1, i, "round %d: pairs yielded", round)
		} else {
			require.Equal(t, n, i, "round %d", round)
		}
	}
}

func TestMapSeqWithoutPanicRecoveryReportsAGoexit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var read atomic.Int64
		seq := crew.MapSeq(t.Context(), 2, counting(100, &read), func(_ context.Context, i int) (int, error) {
			if i == 3 {
				runtime.Goexit()
			}
			return i, nil
		}, crew.WithoutPanicRecovery())
		got := gather(seq)
		require.Len(t, got, 4)
		for i, p := range got[:3] {
			require.NoError(t, p.err)
			require.Equal(t, i, p.r)
		}
		assert.ErrorIs(t, got[3].err, crew.ErrGoexit)
	})
}
