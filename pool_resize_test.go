package crew_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/crewlib/crew"
)

// 13.
func TestPoolResize(t *testing.T) {
	t.Run("every job runs exactly once while the pool grows and shrinks", func(t *testing.T) {
		ignore := goleak.IgnoreCurrent() // the goroutines of earlier tests are theirs
		const jobs = 3000
		runs := make([]atomic.Int32, jobs)
		var done atomic.Int64
		p := crew.NewPool(2, func(_ context.Context, i int) error {
			runs[i].Add(1)
			done.Add(1)
			if i%4 == 0 {
				runtime.Gosched()
			}
			return nil
		}, crew.WithQueueSize(4))
		var wg sync.WaitGroup
		wg.Go(func() {
			for i := range jobs {
				if !assert.NoError(t, p.Submit(context.Background(), i)) {
					return
				}
			}
		})
		for _, step := range []struct {
			after int64
			size  int
		}{{300, 8}, {1200, 1}, {2000, 4}} {
			until(t, func() bool { return done.Load() >= step.after })
			p.Resize(step.size)
			assert.Equal(t, step.size, p.Stats().Workers)
		}
		wg.Wait()
		require.NoError(t, p.Wait())
		for i := range runs {
			if n := runs[i].Load(); n != 1 {
				t.Errorf("job %d ran %d times", i, n)
			}
		}
		s := p.Stats()
		assert.Equal(t, 4, s.Workers, "the current size")
		assert.Len(t, s.PerWorker, 4)
		assert.EqualValues(t, jobs, s.Completed, "retired workers' jobs stay counted")
		assert.EqualValues(t, jobs, s.Submitted)
		goleak.VerifyNone(t, ignore)
	})

	t.Run("growing starts workers that take backlog jobs at once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := crew.NewGroup(1, crew.WithQueueSize(8))
			started, release := make(chan struct{}, 1), gateFor(t)
			require.NoError(t, p.Submit(context.Background(), gated(started, release, nil)))
			<-started
			meet := newMeeting(3)
			for range 3 {
				require.NoError(t, p.Submit(context.Background(), func(context.Context) error {
					meet.arrive()
					return nil
				}))
			}
			p.Resize(4)
			assert.Equal(t, 4, p.Stats().Workers)
			synctest.Wait()
			assert.EqualValues(t, 3, meet.arrived.Load(), "the 3 backlog jobs running at once")
			close(release)
			require.NoError(t, p.Wait())
			assert.Zero(t, meet.missed.Load())
			assert.EqualValues(t, 4, p.Stats().Completed)
		})
	})

	t.Run("the pool's bound follows its size", func(t *testing.T) {
		p := crew.NewGroup(1) // holds 1×(1+2) jobs
		release := gateFor(t)
		var ran atomic.Int64
		hold := func(context.Context) error {
			<-release
			ran.Add(1)
			return nil
		}
		fill := func() int {
			n := 0
			for p.TrySubmit(hold) {
				n++
			}
			return n
		}
		assert.Equal(t, 3, fill())
		p.Resize(2) // holds 6
		assert.Equal(t, 3, fill())
		p.Resize(1) // holds 3, and 6 are held
		assert.Equal(t, 0, fill())
		close(release)
		require.NoError(t, p.Wait())
		assert.EqualValues(t, 6, ran.Load())
	})

	t.Run("Resize after Wait does nothing", func(t *testing.T) {
		ignore := goleak.IgnoreCurrent()
		p := crew.NewGroup(2)
		require.NoError(t, p.Wait())
		p.Resize(5)
		assert.Equal(t, 2, p.Stats().Workers)
		goleak.VerifyNone(t, ignore)
	})
}

// 14.
func TestPoolShutdown(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"a canceled context", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled},
		{"a deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Millisecond)
		}, context.DeadlineExceeded},
	} {
		t.Run("Shutdown with "+tc.name+" that ends while jobs run cancels them and returns ctx's error", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := crew.NewGroup(2, crew.WithQueueSize(8))
				b, bctx := p.NewBatch(context.Background())
				poolStarted, batchStarted := make(chan struct{}), make(chan struct{})
				var poolEnded, batchEnded atomic.Bool
				require.NoError(t, p.Submit(context.Background(), func(ctx context.Context) error {
					close(poolStarted)
					<-ctx.Done()
					poolEnded.Store(true)
					return nil
				}))
				require.NoError(t, b.Submit(context.Background(), func(ctx context.Context) error {
					close(batchStarted)
					<-ctx.Done()
					batchEnded.Store(true)
					return nil
				}))
				<-poolStarted
				<-batchStarted
				var queuedRan atomic.Int64
				for range 3 {
					require.NoError(t, p.Submit(context.Background(), counted(&queuedRan)))
					require.NoError(t, b.Submit(context.Background(), counted(&queuedRan)))
				}

				ctx, cancel := tc.ctx()
				defer cancel()
				// If Shutdown hangs (a context it did not cancel), every
				// goroutine of the bubble blocks and the test fails.
				assert.ErrorIs(t, p.Shutdown(ctx), tc.want)
				synctest.Wait() // Shutdown does not wait for the jobs that run: they see their contexts end
				assert.True(t, poolEnded.Load(), "the pool's job ended")
				assert.True(t, batchEnded.Load(), "the batch's job ended")
				assert.Zero(t, queuedRan.Load(), "queued jobs are skipped")
				assert.ErrorIs(t, context.Cause(bctx), tc.want, "the batch's context ends with a cause that wraps ctx's")
				assert.ErrorIs(t, context.Cause(p.Context()), tc.want)
				ps := p.Stats()
				assert.EqualValues(t, 6, ps.Canceled)
				assert.EqualValues(t, 2, ps.Completed)
				assert.Zero(t, ps.Queued+ps.Running)

				assert.ErrorIs(t, p.Submit(context.Background(), counted(&queuedRan)), crew.ErrPoolClosed)
				assert.False(t, p.TrySubmit(counted(&queuedRan)))

				assert.ErrorIs(t, b.Wait(), tc.want, "skipped jobs: the batch reports its context's cause")
				assert.EqualValues(t, 3, b.Stats().Canceled)
				assert.ErrorIs(t, p.Wait(), tc.want, "Wait returns what it would have: the cause, for skipped jobs")
			})
		})
	}

	t.Run("Shutdown with enough time waits for every job and returns nil", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := crew.NewGroup(2, crew.WithQueueSize(8))
			b, _ := p.NewBatch(context.Background())
			started, release := make(chan struct{}, 2), gateFor(t)
			require.NoError(t, p.Submit(context.Background(), gated(started, release, nil)))
			require.NoError(t, b.Submit(context.Background(), gated(started, release, nil)))
			<-started
			<-started
			var ran atomic.Int64
			for range 2 {
				require.NoError(t, p.Submit(context.Background(), counted(&ran)))
				require.NoError(t, b.Submit(context.Background(), counted(&ran)))
			}
			done := inBackground(func() error { return p.Shutdown(context.Background()) })
			synctest.Wait()
			require.True(t, crew.PoolClosed(p), "Shutdown has begun")
			select {
			case err := <-done:
				t.Fatalf("Shutdown returned (%v) while jobs ran", err)
			default:
			}
			assert.ErrorIs(t, p.Submit(context.Background(), counted(&ran)), crew.ErrPoolClosed)
			assert.ErrorIs(t, b.Submit(context.Background(), counted(&ran)), crew.ErrPoolClosed)
			close(release)
			assert.NoError(t, <-done, "Shutdown")
			assert.EqualValues(t, 4, ran.Load(), "every accepted job ran")
			assert.NoError(t, b.Wait())
			assert.NoError(t, p.Wait())
			s := p.Stats()
			assert.EqualValues(t, 6, s.Completed)
			assert.Zero(t, s.Canceled)
		})
	})
}
