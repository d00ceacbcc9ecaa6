package crew_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// The edges of a pool's life: Shutdown's deadline, closed pools, zero
// values, worker counts, Map's partial results and Goexit's counts.

func TestShutdownReturnsWhenItsContextEnds(t *testing.T) {
	t.Run("a job that ignores its context does not hold Shutdown past its deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			release := make(chan struct{})
			p := crew.NewGroup(1, crew.WithQueueSize(3))
			require.NoError(t, p.Submit(context.Background(), func(context.Context) error { <-release; return nil }))
			var ran atomic.Int64
			for range 3 {
				require.NoError(t, p.Submit(context.Background(), counted(&ran)))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			done := inBackground(func() error { return p.Shutdown(ctx) })
			<-ctx.Done()    // the bubble's clock moved past the deadline
			synctest.Wait() // and Shutdown saw it
			select {
			case err := <-done:
				assert.ErrorIs(t, err, context.DeadlineExceeded)
				assert.ErrorIs(t, p.Context().Err(), context.Canceled, "Shutdown canceled the pool's context")
				assert.Equal(t, 1, p.Stats().Running, "the job that ignores its context still runs")
			default:
				assert.Fail(t, "Shutdown has not returned after its deadline")
			}
			close(release)
			assert.ErrorIs(t, p.Wait(), context.DeadlineExceeded, "Wait waits for it, and returns the cause of the skips")
			assert.Zero(t, ran.Load())
			assert.EqualValues(t, 3, p.Stats().Canceled)
		})
	})
	t.Run("a batch's job that shuts its pool down gets its deadline's error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := crew.NewGroup(2)
			b, _ := p.NewBatch(context.Background())
			got := make(chan error, 1)
			require.NoError(t, b.Submit(context.Background(), func(context.Context) error {
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				defer cancel()
				got <- p.Shutdown(ctx)
				return nil
			}))
			select {
			case err := <-got:
				assert.ErrorIs(t, err, context.DeadlineExceeded)
			case <-time.After(3 * time.Second):
				t.Fatal("Shutdown from a job has not returned after 3s")
			}
			assert.NoError(t, b.Wait())
			assert.NoError(t, p.Wait(), "no job failed or was skipped")
		})
	})
	t.Run("Shutdown returns nil when every job ended first, and leaves their errors to Wait", func(t *testing.T) {
		boom := errors.New("boom")
		p := crew.NewGroup(2)
		require.NoError(t, p.Submit(context.Background(), failsWith(boom)))
		assert.NoError(t, p.Shutdown(context.Background()))
		assert.Same(t, boom, p.Wait())
	})
}

func TestMapBatchOnAClosedPoolReturnsErrPoolClosed(t *testing.T) {
	p := crew.NewGroup(2)
	require.NoError(t, p.Wait())
	out, err := crew.MapBatch(context.Background(), p, []int{1, 2}, func(_ context.Context, v int) (int, error) { return v, nil })
	assert.ErrorIs(t, err, crew.ErrPoolClosed)
	assert.Equal(t, []int{0, 0}, out)
}

func TestFailedCountsAJobKilledByItsInlineChildsGoexit(t *testing.T) {
	// One worker with room for one job more: the job fills it with one
	// job of its own, then its next Submit runs inline, and calls
	// runtime.Goexit, ending the job that ran it too: both fail, and the
	// worker's new goroutine runs the job left in the backlog.
	t.Run("a pool's job", func(t *testing.T) {
		p := crew.NewGroup(1, crew.WithQueueSize(1), crew.WithAllErrors())
		require.NoError(t, p.Submit(context.Background(), func(ctx context.Context) error {
			require.NoError(t, p.Submit(ctx, func(context.Context) error { return nil }))
			_ = p.Submit(ctx, func(context.Context) error { runtime.Goexit(); return nil })
			return nil
		}))
		err := p.Wait()
		assert.ErrorIs(t, err, crew.ErrGoexit)
		s := p.Stats()
		assert.EqualValues(t, 1, s.Inline)
		assert.EqualValues(t, 3, s.Completed)
		assert.Zero(t, s.Dropped)
		assert.EqualValues(t, 2, s.Failed, "the inline job and the job it ended")
		assert.EqualValues(t, 1, s.Replaced)
	})
	t.Run("a batch's job", func(t *testing.T) {
		p := crew.NewGroup(1, crew.WithQueueSize(1))
		b, _ := p.NewBatch(context.Background())
		require.NoError(t, b.Submit(context.Background(), func(ctx context.Context) error {
			require.NoError(t, b.Submit(ctx, func(context.Context) error { return nil }))
			_ = b.Submit(ctx, func(context.Context) error { runtime.Goexit(); return nil })
			return nil
		}))
		assert.ErrorIs(t, b.Wait(), crew.ErrGoexit)
		s := b.Stats()
		assert.EqualValues(t, 1, s.Inline)
		assert.EqualValues(t, 2, s.Failed, "the inline job and the job it ended")
		assert.NoError(t, p.Wait())
	})
}

// mustPanicWithCrew checks that f panics with a crew: message that tells
// to use the constructor, named in want.
func mustPanicWithCrew(t *testing.T, want string, f func()) {
	t.Helper()
	var v any
	func() {
		defer func() { v = recover() }()
		f()
	}()
	msg, _ := v.(string)
	if assert.NotNil(t, v, "no panic") {
		assert.True(t, strings.HasPrefix(msg, "crew: "), "panic %v", v)
		assert.Contains(t, msg, want)
	}
}

func TestEveryMethodOfAZeroValueOrNilPanicsWithACrewMessage(t *testing.T) {
	ctx := context.Background()
	job := func(context.Context) error { return nil }
	pool := map[string]func(p *crew.Pool[crew.Job]){
		"Submit":    func(p *crew.Pool[crew.Job]) { _ = p.Submit(ctx, job) },
		"TrySubmit": func(p *crew.Pool[crew.Job]) { p.TrySubmit(job) },
		"Wait":      func(p *crew.Pool[crew.Job]) { _ = p.Wait() },
		"Stats":     func(p *crew.Pool[crew.Job]) { p.Stats() },
		"Resize":    func(p *crew.Pool[crew.Job]) { p.Resize(2) },
		"Shutdown":  func(p *crew.Pool[crew.Job]) { _ = p.Shutdown(ctx) },
		"NewBatch":  func(p *crew.Pool[crew.Job]) { p.NewBatch(ctx) },
		"Context":   func(p *crew.Pool[crew.Job]) { p.Context() },
		"Name":      func(p *crew.Pool[crew.Job]) { p.Name() },
		"MapBatch": func(p *crew.Pool[crew.Job]) {
			_, _ = crew.MapBatch(ctx, p, []int{1}, func(context.Context, int) (int, error) { return 0, nil })
		},
	}
	for name, call := range pool {
		t.Run("a zero Pool's "+name, func(t *testing.T) {
			mustPanicWithCrew(t, "NewPool, NewGroup or WithContext", func() { call(new(crew.Pool[crew.Job])) })
		})
		t.Run("a nil Pool's "+name, func(t *testing.T) { mustPanicWithCrew(t, "nil", func() { call(nil) }) })
	}
	batch := map[string]func(b *crew.Batch[crew.Job]){
		"Submit":    func(b *crew.Batch[crew.Job]) { _ = b.Submit(ctx, job) },
		"TrySubmit": func(b *crew.Batch[crew.Job]) { b.TrySubmit(job) },
		"Wait":      func(b *crew.Batch[crew.Job]) { _ = b.Wait() },
		"Stats":     func(b *crew.Batch[crew.Job]) { b.Stats() },
	}
	for name, call := range batch {
		t.Run("a zero Batch's "+name, func(t *testing.T) {
			mustPanicWithCrew(t, "Pool.NewBatch", func() { call(new(crew.Batch[crew.Job])) })
		})
		t.Run("a nil Batch's "+name, func(t *testing.T) { mustPanicWithCrew(t, "nil", func() { call(nil) }) })
	}
	ref := map[string]func(r *crew.Ref[int]){
		"Tell":        func(r *crew.Ref[int]) { _ = r.Tell(ctx, 1) },
		"Len":         func(r *crew.Ref[int]) { r.Len() },
		"Busy":        func(r *crew.Ref[int]) { r.Busy() },
		"Name":        func(r *crew.Ref[int]) { r.Name() },
		"Full":        func(r *crew.Ref[int]) { r.Full() },
		"DeadLetters": func(r *crew.Ref[int]) { r.DeadLetters() },
		"Stop":        func(r *crew.Ref[int]) { r.Stop() },
		"Drain":       func(r *crew.Ref[int]) { r.Drain() },
		"Done":        func(r *crew.Ref[int]) { r.Done() },
		"Stopped":     func(r *crew.Ref[int]) { r.Stopped() },
	}
	for name, call := range ref {
		t.Run("a zero Ref's "+name, func(t *testing.T) {
			mustPanicWithCrew(t, "Spawn", func() { call(new(crew.Ref[int])) })
		})
		t.Run("a nil Ref's "+name, func(t *testing.T) { mustPanicWithCrew(t, "nil", func() { call(nil) }) })
	}
	router := map[string]func(r *crew.Router[int]){
		"Tell":        func(r *crew.Router[int]) { _ = r.Tell(ctx, 1) },
		"Broadcast":   func(r *crew.Router[int]) { _ = r.Broadcast(ctx, 1) },
		"Routees":     func(r *crew.Router[int]) { r.Routees() },
		"DeadLetters": func(r *crew.Router[int]) { r.DeadLetters() },
		"Keys":        func(r *crew.Router[int]) { r.Keys() },
		"Stop":        func(r *crew.Router[int]) { r.Stop() },
		"Drain":       func(r *crew.Router[int]) { r.Drain() },
		"Done":        func(r *crew.Router[int]) { r.Done() },
	}
	for name, call := range router {
		t.Run("a zero Router's "+name, func(t *testing.T) {
			mustPanicWithCrew(t, "NewRouter or SpawnRouter", func() { call(new(crew.Router[int])) })
		})
		t.Run("a nil Router's "+name, func(t *testing.T) { mustPanicWithCrew(t, "nil", func() { call(nil) }) })
	}
	t.Run("a zero Picker's Pick", func(t *testing.T) {
		mustPanicWithCrew(t, "NewPicker", func() { new(crew.Picker).Pick() })
	})
	t.Run("a nil Picker's Pick", func(t *testing.T) {
		mustPanicWithCrew(t, "nil", func() { (*crew.Picker)(nil).Pick() })
	})
	// A zero mailbox: Enqueue says which constructor makes one, rather
	// than dereference nil, refuse every message, or block for ever.
	for name, tc := range map[string]struct {
		ctor    string
		enqueue func() error
	}{
		"Unbounded": {"NewUnbounded", func() error { return new(crew.Unbounded[int]).Enqueue(ctx, 1) }},
		"Segmented": {"NewSegmented", func() error { return new(crew.Segmented[int]).Enqueue(ctx, 1) }},
		"Bounded":   {"NewBounded", func() error { return new(crew.Bounded[int]).Enqueue(ctx, 1) }},
		"Fair":      {"NewFair", func() error { return new(crew.Fair[int, int]).Enqueue(ctx, 1) }},
		"Priority":  {"NewPriority", func() error { return new(crew.Priority[int]).Enqueue(ctx, 1) }},
		"Chan":      {"NewChan", func() error { return new(crew.Chan[int]).Enqueue(ctx, 1) }},
	} {
		t.Run("a zero "+name+"'s Enqueue", func(t *testing.T) {
			mustPanicWithCrew(t, tc.ctor, func() { _ = tc.enqueue() })
		})
	}
}

func TestForwardPanicsOnANilTargetOrChannel(t *testing.T) {
	ctx := context.Background()
	ch := make(chan int, 1)
	ch <- 1
	mustPanicWithCrew(t, "Forward: nil target", func() { _ = crew.Forward[int](ctx, ch, nil) })
	mustPanicWithCrew(t, "Forward: nil target", func() { _ = crew.Forward[int](ctx, ch, (*crew.Ref[int])(nil)) })
	mustPanicWithCrew(t, "Forward: nil target", func() { _ = crew.Forward[int](ctx, ch, (*crew.Router[int])(nil)) })
	assert.Len(t, ch, 1, "Forward took nothing from ch")
	ref := crew.Spawn(ctx, nop[int])
	defer ref.Stop()
	mustPanicWithCrew(t, "Forward: nil channel", func() { _ = crew.Forward[int](ctx, nil, ref) })
}

func TestSubmitOnceWaitHasBegunReturnsErrPoolClosedWhateverCtx(t *testing.T) {
	t.Run("a pool's Submit with WithContext's ctx after Wait", func(t *testing.T) {
		p, ctx := crew.WithContext(context.Background(), 2)
		require.NoError(t, p.Wait())
		require.Error(t, ctx.Err(), "Wait canceled the group's context")
		assert.ErrorIs(t, p.Submit(ctx, func(context.Context) error { return nil }), crew.ErrPoolClosed)
	})
	t.Run("a batch's Submit with the batch's ctx after its Wait", func(t *testing.T) {
		p := crew.NewGroup(2)
		b, bctx := p.NewBatch(context.Background())
		require.NoError(t, b.Wait())
		assert.ErrorIs(t, b.Submit(bctx, func(context.Context) error { return nil }), crew.ErrBatchClosed)
		require.NoError(t, p.Wait())
		assert.ErrorIs(t, b.Submit(bctx, func(context.Context) error { return nil }), crew.ErrPoolClosed, "the pool's close first")
	})
	t.Run("before Wait, a done ctx's error, then the pool context's", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		boom := errors.New("boom")
		p, gctx := crew.WithContext(context.Background(), 1)
		assert.ErrorIs(t, p.Submit(ctx, func(context.Context) error { return nil }), context.Canceled)
		require.NoError(t, p.Submit(context.Background(), failsWith(boom)))
		<-gctx.Done() // the first error canceled it
		assert.ErrorIs(t, p.Submit(context.Background(), func(context.Context) error { return nil }), context.Canceled)
		assert.Same(t, boom, p.Wait())
	})
}

func TestAJobsSubmitWithWithContextsCtxIsNotItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type key struct{}
		parent := context.WithValue(context.Background(), key{}, "v")
		p, ctx := crew.WithContext(parent, 2)
		begun, release := make(chan struct{}), make(chan struct{})
		var outer, own error
		var ran atomic.Int64
		require.NoError(t, p.Submit(ctx, func(jobCtx context.Context) error {
			assert.NotEqual(t, ctx, jobCtx, "jobs receive a context derived from WithContext's")
			assert.Equal(t, ctx.Done(), jobCtx.Done())
			assert.Equal(t, "v", jobCtx.Value(key{}))
			close(begun)
			<-release // Wait has begun
			outer = p.Submit(ctx, counted(&ran))
			own = p.Submit(jobCtx, counted(&ran))
			return nil
		}))
		<-begun
		done := inBackground(p.Wait)
		synctest.Wait()
		require.True(t, crew.PoolClosed(p))
		close(release)
		require.NoError(t, <-done)
		assert.ErrorIs(t, outer, crew.ErrPoolClosed, "a Submit with WithContext's ctx is not the job's own")
		assert.NoError(t, own, "a Submit with the job's ctx is its own")
		assert.EqualValues(t, 1, ran.Load())
	})
}

func TestWorkerCountsBeyondTheMostPanicInEveryConstructor(t *testing.T) {
	for _, n := range []int{math.MaxInt, 1<<24 + 1} {
		for name, make := range map[string]func(){
			"NewPool":     func() { crew.NewPool(n, nop[int]) },
			"NewGroup":    func() { crew.NewGroup(n) },
			"WithContext": func() { crew.WithContext(context.Background(), n) },
			"Map": func() {
				_, _ = crew.Map(context.Background(), n, []int{1}, func(context.Context, int) (int, error) { return 0, nil })
			},
		} {
			t.Run(name+" with "+strconvItoa(n), func(t *testing.T) {
				mustPanicWithCrew(t, "must be between 1 and 16777216", make)
			})
		}
	}
}

func strconvItoa(n int) string {
	if n == math.MaxInt {
		return "MaxInt"
	}
	return "2^24+1"
}

func TestMapReturnsTheResultsOfTheCallsThatSucceeded(t *testing.T) {
	boom := errors.New("boom")
	f := func(_ context.Context, v int) (int, error) {
		if v == 5 {
			return 99, boom
		}
		return v * 10, nil
	}
	inputs := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	want := []int{0, 10, 20, 30, 40, 0, 0, 0, 0, 0} // one worker: those after 5 are skipped
	t.Run("Map", func(t *testing.T) {
		out, err := crew.Map(context.Background(), 1, inputs, f)
		assert.Same(t, boom, err)
		assert.Equal(t, want, out)
	})
	t.Run("MapBatch", func(t *testing.T) {
		p := crew.NewGroup(1)
		out, err := crew.MapBatch(context.Background(), p, inputs, f)
		assert.Same(t, boom, err)
		assert.Equal(t, want, out)
		assert.NoError(t, p.Wait())
	})
}

func TestMapBatchOnAMailboxPoolPanicsNamingMapBatch(t *testing.T) {
	p := crew.NewGroup(1, crew.WithMailbox(func() crew.Mailbox[crew.Job] { return crew.NewUnbounded[crew.Job]() }))
	defer func() { assert.NoError(t, p.Wait()) }()
	mustPanicWithCrew(t, "MapBatch", func() {
		_, _ = crew.MapBatch(context.Background(), p, []int{1}, func(context.Context, int) (int, error) { return 0, nil })
	})
}
