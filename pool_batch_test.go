package crew_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
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

// 1.
func TestBatchFailureIsIsolated(t *testing.T) {
	t.Run("a batch's first error cancels its context and skips its queued jobs only", func(t *testing.T) {
		boom := errors.New("boom")
		p := crew.NewGroup(2, crew.WithQueueSize(16))
		a, actx := p.NewBatch(context.Background())
		b, bctx := p.NewBatch(context.Background())

		aStarted, aRelease := make(chan struct{}, 1), gateFor(t)
		bStarted, bRelease := make(chan struct{}, 1), gateFor(t)
		require.NoError(t, a.Submit(context.Background(), gated(aStarted, aRelease, boom)))
		<-aStarted
		require.NoError(t, b.Submit(context.Background(), gated(bStarted, bRelease, nil)))
		<-bStarted // both workers are busy: what follows is queued

		var aRan, bRan atomic.Int64
		for range 5 { // interleaved in the backlog
			require.NoError(t, a.Submit(context.Background(), counted(&aRan)))
			require.NoError(t, b.Submit(context.Background(), counted(&bRan)))
		}

		close(aRelease)
		<-actx.Done()
		assert.Same(t, boom, context.Cause(actx), "the batch's context has its first error as its cause")
		assert.ErrorIs(t, a.Submit(context.Background(), counted(&aRan)), context.Canceled,
			"Submit returns the batch context's Err() once it is done")
		assert.False(t, a.TrySubmit(counted(&aRan)), "TrySubmit refuses once the batch's context is done")

		assert.Same(t, boom, a.Wait(), "Wait returns the batch's first error itself")
		assert.Zero(t, aRan.Load(), "no queued job of the failed batch runs")
		as := a.Stats()
		assert.EqualValues(t, 6, as.Submitted)
		assert.EqualValues(t, 1, as.Completed)
		assert.EqualValues(t, 1, as.Failed)
		assert.EqualValues(t, 5, as.Canceled)
		assert.Zero(t, as.Queued+as.Running)

		assert.NoError(t, bctx.Err(), "another batch's context is untouched")
		assert.NoError(t, p.Context().Err(), "the pool's context is untouched")
		close(bRelease)
		assert.NoError(t, b.Wait())
		assert.EqualValues(t, 5, bRan.Load(), "every job of the other batch runs")
		bs := b.Stats()
		assert.EqualValues(t, 6, bs.Completed)
		assert.Zero(t, bs.Canceled)
		assert.Zero(t, bs.Failed)

		assert.NoError(t, p.Wait(), "a batch's error never reaches the pool's Wait")
		ps := p.Stats()
		assert.EqualValues(t, 12, ps.Submitted)
		assert.EqualValues(t, 7, ps.Completed)
		assert.EqualValues(t, 5, ps.Canceled)
	})

	t.Run("a typed pool's handler receives the batch's context", func(t *testing.T) {
		type key struct{}
		boom := errors.New("boom")
		started := make(chan struct{})
		var sawValue atomic.Bool
		var cause atomic.Value
		p := crew.NewPool(2, func(ctx context.Context, v int) error {
			if v == 1 {
				return boom
			}
			sawValue.Store(ctx.Value(key{}) == "batch")
			close(started)
			<-ctx.Done()
			cause.Store(context.Cause(ctx))
			return nil
		})
		b, _ := p.NewBatch(context.WithValue(context.Background(), key{}, "batch"))
		require.NoError(t, b.Submit(context.Background(), 0))
		<-started
		require.NoError(t, b.Submit(context.Background(), 1))
		assert.Same(t, boom, b.Wait())
		assert.True(t, sawValue.Load(), "the handler's ctx derives from the one given to NewBatch")
		assert.Equal(t, boom, cause.Load(), "the handler's ctx is the one the batch's first error cancels")
		assert.NoError(t, p.Wait())
	})
}

// 2.
func TestBatchLimitIsNeverExceeded(t *testing.T) {
	for _, limit := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("at most %d jobs of a batch with WithLimit(%d) run at once on 8 busy workers", limit, limit), func(t *testing.T) {
			const jobs = 300
			p := crew.NewGroup(8, crew.WithQueueSize(64))
			lim, _ := p.NewBatch(context.Background(), crew.WithLimit(limit))
			other, _ := p.NewBatch(context.Background())
			assert.Equal(t, limit, lim.Stats().Limit)
			assert.Zero(t, other.Stats().Limit)

			var hw highWater
			meet := newMeeting(limit) // the first jobs reach the limit for sure
			limited := func(i int) crew.Job {
				return func(context.Context) error {
					hw.enter()
					defer hw.exit()
					if i < limit {
						meet.arrive()
					}
					for range 5 {
						runtime.Gosched()
					}
					return nil
				}
			}
			var otherRan atomic.Int64
			busy := func(context.Context) error {
				otherRan.Add(1)
				for range 5 {
					runtime.Gosched()
				}
				return nil
			}

			var wg sync.WaitGroup
			wg.Go(func() {
				for range jobs {
					if !assert.NoError(t, other.Submit(context.Background(), busy)) {
						return
					}
				}
			})
			var overLimit int
			for i := range jobs {
				require.NoError(t, lim.Submit(context.Background(), limited(i)))
				if i%16 == 0 {
					if s := lim.Stats(); s.Running > limit {
						overLimit++
					}
				}
			}
			wg.Wait()
			require.NoError(t, lim.Wait())
			require.NoError(t, other.Wait())
			require.NoError(t, p.Wait())

			assert.Zero(t, meet.missed.Load(), "the first %d jobs of the batch never ran together", limit)
			assert.LessOrEqual(t, hw.max.Load(), int32(limit), "the batch's limit was exceeded")
			assert.Equal(t, int32(limit), hw.max.Load(), "the batch reached its limit")
			assert.Zero(t, overLimit, "Stats().Running exceeded the limit")
			assert.EqualValues(t, jobs, lim.Stats().Completed)
			assert.EqualValues(t, jobs, otherRan.Load())
		})
	}
}

// 3.
func TestBatchJobOverTheLimitHoldsNoWorker(t *testing.T) {
	t.Run("7 jobs of another batch run together while a limited batch's first job holds the 8th worker", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := crew.NewGroup(8, crew.WithQueueSize(8))
			a, _ := p.NewBatch(context.Background(), crew.WithLimit(1))
			b, _ := p.NewBatch(context.Background())

			aStarted, aRelease := make(chan struct{}, 1), gateFor(t)
			defer func() {
				select {
				case <-aRelease:
				default:
					close(aRelease)
				}
			}()
			require.NoError(t, a.Submit(context.Background(), gated(aStarted, aRelease, nil)))
			<-aStarted
			var aRan atomic.Int64
			for range 4 { // over the limit: they must wait without holding a worker
				require.NoError(t, a.Submit(context.Background(), counted(&aRan)))
			}

			meet := newMeeting(7)
			for range 7 {
				require.NoError(t, b.Submit(context.Background(), func(context.Context) error {
					meet.arrive()
					return nil
				}))
			}
			assert.NoError(t, b.Wait(), "the other batch's Wait")
			assert.Zero(t, meet.missed.Load(), "the 7 jobs of the other batch did not all run at once")
			assert.Zero(t, aRan.Load(), "a job over the limit ran while the batch's first job ran")

			close(aRelease)
			assert.NoError(t, a.Wait())
			assert.EqualValues(t, 4, aRan.Load())
			assert.NoError(t, p.Wait())
		})
	})
}

// 4.
func TestBatchDispatchIsFIFOAmongRunnableJobs(t *testing.T) {
	t.Run("on one worker, the jobs run in submission order, a limited batch's too", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			submit []string // a's jobs and b's, in the order submitted
		}{
			{"a's jobs first", []string{"a1", "a2", "b1", "b2"}},
			{"interleaved", []string{"a1", "b1", "a2", "b2"}},
			{"b's first", []string{"b1", "a1", "a2", "b2", "a3"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var log runLog
				p := crew.NewGroup(1, crew.WithQueueSize(8))
				started, release := make(chan struct{}, 1), gateFor(t)
				hold := log.job("held")
				require.NoError(t, p.Submit(context.Background(), func(ctx context.Context) error {
					started <- struct{}{}
					<-release
					return hold(ctx)
				}))
				<-started
				a, _ := p.NewBatch(context.Background(), crew.WithLimit(1))
				b, _ := p.NewBatch(context.Background())
				for _, name := range tc.submit {
					batch := a
					if name[0] == 'b' {
						batch = b
					}
					require.NoError(t, batch.Submit(context.Background(), log.job(name)))
				}
				close(release)
				require.NoError(t, a.Wait())
				require.NoError(t, b.Wait())
				require.NoError(t, p.Wait())
				assert.Equal(t, append([]string{"held"}, tc.submit...), log.get(),
					"a job over the limit that became runnable keeps its place among older jobs")
			})
		}
	})

	t.Run("jobs over the limit are overtaken, then run in their own order", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var log runLog
			p := crew.NewGroup(2, crew.WithQueueSize(8))
			a, _ := p.NewBatch(context.Background(), crew.WithLimit(1))
			b, _ := p.NewBatch(context.Background())

			poolStarted, poolRelease := make(chan struct{}, 1), gateFor(t)
			require.NoError(t, p.Submit(context.Background(), gated(poolStarted, poolRelease, nil)))
			<-poolStarted
			aStarted, aRelease := make(chan struct{}, 1), gateFor(t)
			require.NoError(t, a.Submit(context.Background(), gated(aStarted, aRelease, nil)))
			<-aStarted // both workers are held
			for _, name := range []string{"a1", "b1", "a2", "b2"} {
				batch := a
				if name[0] == 'b' {
					batch = b
				}
				require.NoError(t, batch.Submit(context.Background(), log.job(name)))
			}

			close(poolRelease) // one worker: a1 and a2 are over a's limit
			assert.NoError(t, b.Wait())
			close(aRelease)
			require.NoError(t, a.Wait())
			require.NoError(t, p.Wait())
			assert.Equal(t, []string{"b1", "b2", "a1", "a2"}, log.get())
		})
	})
}

// 5.
func TestBatchWaitWaitsForItsOwnJobsOnly(t *testing.T) {
	t.Run("a batch's Wait returns while another batch's job is blocked, whose Wait returns only after it", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := crew.NewGroup(2)
			a, actx := p.NewBatch(context.Background())
			b, _ := p.NewBatch(context.Background())

			aStarted, aRelease := make(chan struct{}, 1), gateFor(t)
			require.NoError(t, a.Submit(context.Background(), gated(aStarted, aRelease, nil)))
			<-aStarted
			var bRan atomic.Int64
			for range 5 {
				require.NoError(t, b.Submit(context.Background(), counted(&bRan)))
			}
			assert.NoError(t, b.Wait(), "b's Wait")
			assert.EqualValues(t, 5, bRan.Load(), "b's Wait returned before b's jobs ended")

			var extra atomic.Int64
			const extras = 3 // accepted before a's Wait begins
			for range extras {
				require.NoError(t, a.Submit(context.Background(), counted(&extra)))
			}
			aDone := inBackground(a.Wait)
			synctest.Wait()
			require.True(t, crew.BatchClosed(a), "a's Wait has begun")
			assert.ErrorIs(t, a.Submit(context.Background(), counted(&extra)), crew.ErrBatchClosed, "a refuses jobs once its Wait began")
			select {
			case err := <-aDone:
				t.Fatalf("a's Wait returned (%v) while a's job was still blocked", err)
			default:
			}
			assert.NoError(t, actx.Err(), "a's context is canceled only when its Wait returns")

			close(aRelease)
			assert.NoError(t, <-aDone, "a's Wait")
			assert.EqualValues(t, extras, extra.Load(), "every job a accepted ran before its Wait returned")
			assert.ErrorIs(t, actx.Err(), context.Canceled, "Wait cancels the batch's context")
			assert.NoError(t, p.Wait())
		})
	})
}

// 6.
func TestManyBatchesEachWaitForExactlyTheirOwnJobs(t *testing.T) {
	t.Run("1000 batches from 64 goroutines on 8 workers each see exactly their own jobs and errors", func(t *testing.T) {
		const (
			batches    = 1000
			submitters = 64
		)
		seed := uint64(time.Now().UnixNano())
		t.Logf("seed %d", seed)
		p := crew.NewGroup(8)
		var accepted atomic.Int64
		var next atomic.Int64
		var wg sync.WaitGroup
		for g := range submitters {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(seed, uint64(g)))
				for {
					id := int(next.Add(1)) - 1
					if id >= batches {
						return
					}
					if !oneOfManyBatches(t, p, id, rng, &accepted) {
						return
					}
				}
			})
		}
		wg.Wait()
		require.NoError(t, p.Wait(), "batch errors never reach the pool")
		s := p.Stats()
		assert.Equal(t, accepted.Load(), s.Submitted, "the pool counts every job its batches accepted")
		assert.Equal(t, s.Submitted, s.Completed+s.Canceled)
	})
}

// oneOfManyBatches runs batch id with 0 to 20 jobs, one in four failing,
// and checks what its Wait and Stats report. It reports through assert
// only, from a goroutine of the test's.
func oneOfManyBatches(t *testing.T, p *crew.Pool[crew.Job], id int, rng *rand.Rand, accepted *atomic.Int64) bool {
	mine := fmt.Errorf("batch %d failed", id)
	n := rng.IntN(21)
	failAt := -1
	if n > 0 && rng.IntN(4) == 0 {
		failAt = rng.IntN(n)
	}
	b, _ := p.NewBatch(context.Background())
	var ran atomic.Int64
	submitted := int64(0)
	for j := range n {
		err := b.Submit(context.Background(), func(context.Context) error {
			ran.Add(1)
			if j == failAt {
				return fmt.Errorf("job %d: %w", j, mine)
			}
			if j%3 == 0 {
				runtime.Gosched()
			}
			return nil
		})
		if err != nil {
			// Only a failed batch refuses, with its context's error.
			if !assert.True(t, failAt >= 0 && j > failAt, "batch %d refused job %d: %v", id, j, err) ||
				!assert.ErrorIs(t, err, context.Canceled, "batch %d", id) {
				_ = b.Wait()
				return false
			}
			break
		}
		submitted++
	}
	accepted.Add(submitted)
	err := b.Wait()
	s := b.Stats()
	ok := assert.Equal(t, submitted, s.Submitted, "batch %d", id)
	ok = assert.Equal(t, s.Submitted, s.Completed+s.Canceled, "batch %d", id) && ok
	ok = assert.Equal(t, ran.Load(), s.Completed, "batch %d", id) && ok
	ok = assert.Zero(t, s.Queued+s.Running, "batch %d", id) && ok
	if failAt < 0 {
		ok = assert.NoError(t, err, "batch %d", id) && ok
		ok = assert.Equal(t, submitted, ran.Load(), "batch %d: every job ran", id) && ok
		ok = assert.Zero(t, s.Canceled, "batch %d", id) && ok
	} else {
		ok = assert.ErrorIs(t, err, mine, "batch %d returns its own error", id) && ok
		ok = assert.EqualValues(t, 1, s.Failed, "batch %d", id) && ok
	}
	return ok
}

// 7.
func TestBatchSubmitAfterWait(t *testing.T) {
	t.Run("a batch whose Wait returned refuses jobs with ErrBatchClosed", func(t *testing.T) {
		p := crew.NewGroup(2)
		b, _ := p.NewBatch(context.Background())
		var ran atomic.Int64
		require.NoError(t, b.Submit(context.Background(), counted(&ran)))
		require.NoError(t, b.Wait())
		assert.ErrorIs(t, b.Submit(context.Background(), counted(&ran)), crew.ErrBatchClosed)
		assert.False(t, b.TrySubmit(counted(&ran)))
		assert.NoError(t, b.Wait(), "Wait may be called again and returns the same")
		assert.EqualValues(t, 1, ran.Load())
		assert.EqualValues(t, 1, b.Stats().Submitted)
		assert.NoError(t, p.Wait())
	})

	t.Run("after the pool's Wait, a batch's Submit returns ErrPoolClosed", func(t *testing.T) {
		p := crew.NewGroup(2)
		before, _ := p.NewBatch(context.Background())
		var ran atomic.Int64
		require.True(t, before.TrySubmit(counted(&ran)))
		require.NoError(t, p.Wait())
		assert.ErrorIs(t, before.Submit(context.Background(), counted(&ran)), crew.ErrPoolClosed)
		assert.False(t, before.TrySubmit(counted(&ran)))
		assert.NoError(t, before.Wait())

		after, actx := p.NewBatch(context.Background())
		assert.ErrorIs(t, after.Submit(context.Background(), counted(&ran)), crew.ErrPoolClosed)
		assert.False(t, after.TrySubmit(counted(&ran)))
		assert.NoError(t, after.Wait())
		assert.ErrorIs(t, actx.Err(), context.Canceled)
		assert.EqualValues(t, 1, ran.Load())
	})

	t.Run("Wait returns the same to every call, an error too", func(t *testing.T) {
		boom := errors.New("boom")
		p := crew.NewGroup(1)
		b, _ := p.NewBatch(context.Background())
		require.NoError(t, b.Submit(context.Background(), failsWith(boom)))
		assert.Same(t, boom, b.Wait())
		assert.Same(t, boom, b.Wait())
		assert.ErrorIs(t, b.Submit(context.Background(), failsWith(boom)), crew.ErrBatchClosed)
		assert.NoError(t, p.Wait())
	})

	t.Run("a Submit blocked on a full pool returns its ctx's error when ctx ends", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := crew.NewGroup(1) // holds 3 jobs
			b, _ := p.NewBatch(context.Background())
			started, release := make(chan struct{}, 1), gateFor(t)
			require.NoError(t, b.Submit(context.Background(), gated(started, release, nil)))
			<-started
			var ran atomic.Int64
			require.NoError(t, b.Submit(context.Background(), counted(&ran)))
			require.NoError(t, b.Submit(context.Background(), counted(&ran)))
			assert.False(t, b.TrySubmit(counted(&ran)), "the pool is full")
			ctx, cancel := context.WithCancel(context.Background())
			blocked := inBackground(func() error { return b.Submit(ctx, counted(&ran)) })
			synctest.Wait()
			require.Equal(t, 1, crew.PoolBlocked(p))
			cancel()
			assert.ErrorIs(t, <-blocked, context.Canceled)
			close(release)
			assert.NoError(t, b.Wait())
			assert.EqualValues(t, 2, ran.Load())
			assert.NoError(t, p.Wait())
		})
	})
}

// 8.
func TestBatchJobsSubmitMoreJobs(t *testing.T) {
	const depth = 6 // a binary tree of 127 jobs
	const total = 1<<(depth+1) - 1
	tree := func(b *crew.Batch[crew.Job], ran, refused *atomic.Int64) crew.Job {
		var node func(level int) crew.Job
		node = func(level int) crew.Job {
			return func(ctx context.Context) error {
				ran.Add(1)
				if level == depth {
					return nil
				}
				for range 2 {
					if b.Submit(ctx, node(level+1)) != nil {
						refused.Add(1)
					}
				}
				return nil
			}
		}
		return node(0)
	}

	t.Run("a job's own Submits on a full 1-worker pool do not deadlock and are waited for", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := crew.NewGroup(1)
			b, _ := p.NewBatch(context.Background())
			var ran, refused atomic.Int64
			require.NoError(t, b.Submit(context.Background(), tree(b, &ran, &refused)))
			// A deadlock blocks every goroutine of the bubble: the test fails.
			assert.NoError(t, b.Wait())
			assert.EqualValues(t, total, ran.Load(), "Wait waits for the jobs its jobs submitted")
			assert.Zero(t, refused.Load())
			s := b.Stats()
			assert.EqualValues(t, total, s.Submitted)
			assert.EqualValues(t, total, s.Completed)
			assert.Positive(t, s.Inline, "the pool was full, so some jobs ran inline")
			assert.NoError(t, p.Wait())
		})
	})

	t.Run("a job's own Submit is accepted after the batch's Wait began", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := crew.NewGroup(2) // the second worker runs the extra jobs
			b, _ := p.NewBatch(context.Background())
			var ran, refused, extra atomic.Int64
			started, release := make(chan struct{}, 1), gateFor(t)
			root := tree(b, &ran, &refused)
			require.NoError(t, b.Submit(context.Background(), func(ctx context.Context) error {
				started <- struct{}{}
				<-release
				return root(ctx)
			}))
			<-started
			const extras = 3 // accepted before the batch's Wait begins
			for range extras {
				require.NoError(t, b.Submit(context.Background(), counted(&extra)))
			}
			done := inBackground(b.Wait)
			synctest.Wait()
			require.True(t, crew.BatchClosed(b), "the batch's Wait has begun")
			assert.ErrorIs(t, b.Submit(context.Background(), counted(&extra)), crew.ErrBatchClosed)
			close(release)
			assert.NoError(t, <-done) // a deadlock blocks every goroutine of the bubble: the test fails
			assert.EqualValues(t, total, ran.Load())
			assert.Zero(t, refused.Load(), "a job's own Submit is accepted after Wait began")
			assert.EqualValues(t, extras, extra.Load())
			assert.EqualValues(t, total+extras, b.Stats().Completed)
			assert.NoError(t, p.Wait())
		})
	})
}

// 9.
func TestBatchJobPanicIsTheBatchsError(t *testing.T) {
	t.Run("a panic fails the batch as *panics.ErrRecovered, not the pool", func(t *testing.T) {
		p := crew.NewGroup(2)
		b, bctx := p.NewBatch(context.Background())
		var ran atomic.Int64
		require.NoError(t, b.Submit(context.Background(), func(context.Context) error {
			explode()
			return nil
		}))
		err := b.Wait()
		var rec *panics.ErrRecovered
		require.ErrorAs(t, err, &rec)
		assert.Contains(t, rec.Error(), "kaboom")
		assert.ErrorAs(t, context.Cause(bctx), &rec, "the panic is the cause of the batch's context")
		s := b.Stats()
		assert.EqualValues(t, 1, s.Panicked)
		assert.EqualValues(t, 1, s.Failed)
		assert.EqualValues(t, 1, s.Completed)

		other, _ := p.NewBatch(context.Background())
		require.NoError(t, other.Submit(context.Background(), counted(&ran)))
		assert.NoError(t, other.Wait(), "the pool still runs other batches")
		assert.EqualValues(t, 1, ran.Load())
		assert.NoError(t, p.Wait(), "a batch's panic never reaches the pool's Wait")
	})
}

// 10.
func TestBatchWithAllErrorsJoinsThem(t *testing.T) {
	t.Run("WithAllErrors makes a batch's Wait return every error, joined", func(t *testing.T) {
		errs := []error{errors.New("e1"), errors.New("e2"), errors.New("e3")}
		p := crew.NewGroup(3)
		b, _ := p.NewBatch(context.Background(), crew.WithAllErrors())
		meet := newMeeting(len(errs)) // all dispatched before the first fails
		for _, e := range errs {
			require.NoError(t, b.Submit(context.Background(), func(context.Context) error {
				meet.arrive()
				return e
			}))
		}
		err := b.Wait()
		require.Error(t, err)
		for _, e := range errs {
			assert.ErrorIs(t, err, e)
		}
		assert.Zero(t, meet.missed.Load())
		assert.EqualValues(t, 3, b.Stats().Failed)
		assert.NoError(t, p.Wait())
	})

	t.Run("without WithAllErrors, Wait returns the first error only", func(t *testing.T) {
		e1, e2 := errors.New("e1"), errors.New("e2")
		p := crew.NewGroup(1)
		b, _ := p.NewBatch(context.Background())
		started, release := make(chan struct{}, 1), gateFor(t)
		require.NoError(t, b.Submit(context.Background(), gated(started, release, e1)))
		<-started
		other, _ := p.NewBatch(context.Background())
		require.NoError(t, other.Submit(context.Background(), failsWith(e2)))
		close(release)
		assert.Same(t, e1, b.Wait())
		assert.Same(t, e2, other.Wait())
		assert.NoError(t, p.Wait())
	})
}

// 11.
func TestBatchSkippedJobsWithoutFailureReportTheCause(t *testing.T) {
	t.Run("a batch whose parent is canceled while jobs are queued returns the parent's cause", func(t *testing.T) {
		stop := errors.New("stop")
		parent, cancel := context.WithCancelCause(context.Background())
		p := crew.NewGroup(1, crew.WithQueueSize(8))
		b, bctx := p.NewBatch(parent)
		started, release := make(chan struct{}, 1), gateFor(t)
		require.NoError(t, b.Submit(context.Background(), gated(started, release, nil)))
		<-started
		var ran atomic.Int64
		for range 3 {
			require.NoError(t, b.Submit(context.Background(), counted(&ran)))
		}
		cancel(stop)
		<-bctx.Done()
		close(release)
		err := b.Wait()
		assert.ErrorIs(t, err, stop, "a batch never reports success for jobs that did not run")
		assert.Same(t, stop, context.Cause(parent))
		assert.Zero(t, ran.Load())
		s := b.Stats()
		assert.EqualValues(t, 3, s.Canceled)
		assert.EqualValues(t, 1, s.Completed)
		assert.Zero(t, s.Failed)
		assert.NoError(t, p.Wait())
	})
}

// 12.
func TestBatchDeadLetters(t *testing.T) {
	t.Run("a batch's skipped jobs reach its own sink, another batch's the pool's", func(t *testing.T) {
		boom, bang := errors.New("boom"), errors.New("bang")
		var poolDead, batchDead letters
		p := crew.NewGroup(1, crew.WithQueueSize(16), crew.WithDeadLetters(poolDead.sink))
		a, _ := p.NewBatch(context.Background(), crew.WithDeadLetters(batchDead.sink))
		b, _ := p.NewBatch(context.Background())

		started, release := make(chan struct{}, 1), gateFor(t)
		require.NoError(t, p.Submit(context.Background(), gated(started, release, nil)))
		<-started
		var ran atomic.Int64
		require.NoError(t, a.Submit(context.Background(), failsWith(boom)))
		require.NoError(t, b.Submit(context.Background(), failsWith(bang)))
		for range 4 {
			require.NoError(t, a.Submit(context.Background(), counted(&ran)))
		}
		for range 3 {
			require.NoError(t, b.Submit(context.Background(), counted(&ran)))
		}
		close(release)
		assert.Same(t, boom, a.Wait())
		assert.Same(t, bang, b.Wait())
		require.NoError(t, p.Wait())

		assert.Zero(t, ran.Load())
		as, bs := a.Stats(), b.Stats()
		assert.EqualValues(t, 4, as.Canceled)
		assert.EqualValues(t, 3, bs.Canceled)
		assert.Len(t, batchDead.get(), int(as.Canceled), "the batch's sink gets its skipped jobs")
		for _, d := range batchDead.get() {
			assert.ErrorIs(t, d.Reason, boom)
		}
		assert.Len(t, poolDead.get(), int(bs.Canceled), "by default, the pool's sink gets them")
		for _, d := range poolDead.get() {
			assert.ErrorIs(t, d.Reason, bang)
		}
	})
}

// 15.
func TestBatchBadInputPanics(t *testing.T) {
	var nilCtx context.Context
	bg := context.Background()
	nop := func(context.Context, keyedJob) error { return nil }
	for _, tc := range []struct {
		name string
		call func(t *testing.T)
	}{
		{"WithLimit(0) panics", func(t *testing.T) {
			assert.PanicsWithValue(t, "crew: WithLimit: n must be at least 1, got 0", func() { crew.WithLimit(0) })
		}},
		{"WithLimit(-1) panics", func(t *testing.T) { panicsWithCrewPrefix(t, func() { crew.WithLimit(-1) }) }},
		{"NewBatch with a nil context panics", func(t *testing.T) {
			p := crew.NewGroup(1)
			defer p.Wait()
			panicsWithCrewPrefix(t, func() { p.NewBatch(nilCtx) })
		}},
		{"NewBatch with a pool's option panics", func(t *testing.T) {
			p := crew.NewGroup(1)
			defer p.Wait()
			panicsWithCrewPrefix(t, func() { p.NewBatch(bg, crew.WithQueueSize(3)) })
			panicsWithCrewPrefix(t, func() { p.NewBatch(bg, crew.WithName("b")) })
		}},
		{"NewBatch on a pool with WithKey panics", func(t *testing.T) {
			p := crew.NewPool(1, nop, crew.WithKey(jobKey))
			defer p.Wait()
			panicsWithCrewPrefix(t, func() { p.NewBatch(bg) })
		}},
		{"NewBatch on a pool with WithConsistentHash panics", func(t *testing.T) {
			p := crew.NewPool(1, nop, crew.WithConsistentHash(jobKey))
			defer p.Wait()
			panicsWithCrewPrefix(t, func() { p.NewBatch(bg) })
		}},
		{"NewBatch on a pool with WithMailbox panics", func(t *testing.T) {
			p := crew.NewGroup(1, crew.WithMailbox(func() crew.Mailbox[crew.Job] { return crew.NewUnbounded[crew.Job]() }))
			defer p.Wait()
			panicsWithCrewPrefix(t, func() { p.NewBatch(bg) })
		}},
		{"a batch's Submit with a nil context panics", func(t *testing.T) {
			p := crew.NewGroup(1)
			defer p.Wait()
			b, _ := p.NewBatch(bg)
			defer b.Wait()
			panicsWithCrewPrefix(t, func() { _ = b.Submit(nilCtx, noop) })
		}},
		{"Resize(0) panics", func(t *testing.T) {
			p := crew.NewGroup(1)
			defer p.Wait()
			panicsWithCrewPrefix(t, func() { p.Resize(0) })
			panicsWithCrewPrefix(t, func() { p.Resize(-2) })
		}},
		{"Resize of a pool with WithConsistentHash panics", func(t *testing.T) {
			p := crew.NewPool(2, nop, crew.WithConsistentHash(jobKey))
			defer p.Wait()
			panicsWithCrewPrefix(t, func() { p.Resize(3) })
		}},
		{"Shutdown(nil) panics", func(t *testing.T) {
			p := crew.NewGroup(1)
			defer p.Wait()
			panicsWithCrewPrefix(t, func() { _ = p.Shutdown(nilCtx) })
		}},
		{"MapBatch with a nil context, pool or function panics", func(t *testing.T) {
			p := crew.NewGroup(1)
			defer p.Wait()
			f := func(_ context.Context, v int) (int, error) { return v, nil }
			panicsWithCrewPrefix(t, func() { _, _ = crew.MapBatch(nilCtx, p, []int{1}, f) })
			panicsWithCrewPrefix(t, func() { _, _ = crew.MapBatch(bg, nil, []int{1}, f) })
			panicsWithCrewPrefix(t, func() { _, _ = crew.MapBatch[int, int](bg, p, []int{1}, nil) })
		}},
	} {
		t.Run(tc.name, tc.call)
	}
}

// 16.
func TestMapBatch(t *testing.T) {
	square := func(_ context.Context, v int) (int, error) {
		if v%5 == 0 {
			runtime.Gosched()
		}
		return v * v, nil
	}
	inputs := make([]int, 100)
	want := make([]int, len(inputs))
	for i := range inputs {
		inputs[i], want[i] = i, i*i
	}

	t.Run("results come in input order on a shared pool", func(t *testing.T) {
		p := crew.NewGroup(4)
		got, err := crew.MapBatch(context.Background(), p, inputs, square)
		require.NoError(t, err)
		assert.Equal(t, want, got)
		got, err = crew.MapBatch(context.Background(), p, nil, square)
		assert.NoError(t, err)
		assert.Empty(t, got)
		require.NoError(t, p.Wait())
	})

	t.Run("the first error returns the results so far and leaves other batches alone", func(t *testing.T) {
		boom := errors.New("boom")
		p := crew.NewGroup(4)
		other, _ := p.NewBatch(context.Background())
		started, release := make(chan struct{}, 2), gateFor(t)
		var ran atomic.Int64
		for range 2 { // hold two of the workers for the whole MapBatch
			require.NoError(t, other.Submit(context.Background(), func(ctx context.Context) error {
				ran.Add(1)
				return gated(started, release, nil)(ctx)
			}))
		}
		<-started
		<-started
		for range 6 {
			require.NoError(t, other.Submit(context.Background(), counted(&ran)))
		}
		got, err := crew.MapBatch(context.Background(), p, inputs, func(ctx context.Context, v int) (int, error) {
			if v == 3 {
				return 0, boom
			}
			return square(ctx, v)
		})
		assert.Len(t, got, len(inputs), "the results of the calls that returned nil, zero elsewhere")
		assert.Zero(t, got[3], "the call that failed leaves no result")
		assert.Same(t, boom, err)
		close(release)
		assert.NoError(t, other.Wait())
		assert.EqualValues(t, 8, ran.Load())
		assert.NoError(t, p.Wait())
	})

	t.Run("if ctx ends first, it returns ctx's cause beside the results so far", func(t *testing.T) {
		stop := errors.New("stop")
		ctx, cancel := context.WithCancelCause(context.Background())
		p := crew.NewGroup(2)
		got, err := crew.MapBatch(ctx, p, inputs, func(ctx context.Context, v int) (int, error) {
			if v == 0 {
				cancel(stop)
			}
			<-ctx.Done() // no call ends before ctx does, whichever worker runs the first
			return v, nil
		})
		assert.Len(t, got, len(inputs))
		assert.Same(t, stop, err)
		require.NoError(t, p.Wait())
	})

	t.Run("WithLimit caps the calls in flight", func(t *testing.T) {
		p := crew.NewGroup(8)
		var hw highWater
		got, err := crew.MapBatch(context.Background(), p, inputs, func(ctx context.Context, v int) (int, error) {
			hw.enter()
			defer hw.exit()
			return square(ctx, v)
		}, crew.WithLimit(2))
		require.NoError(t, err)
		assert.Equal(t, want, got)
		assert.LessOrEqual(t, hw.max.Load(), int32(2))
		require.NoError(t, p.Wait())
	})
}

// 17.
func TestEmptyBatch(t *testing.T) {
	t.Run("an empty batch's Wait returns nil at once and cancels its context", func(t *testing.T) {
		p := crew.NewGroup(2)
		b, bctx := p.NewBatch(context.Background())
		require.NoError(t, bctx.Err())
		assert.NoError(t, b.Wait())
		assert.ErrorIs(t, bctx.Err(), context.Canceled)
		assert.Equal(t, crew.BatchStats{}, b.Stats())
		assert.NoError(t, p.Wait())
	})
}
