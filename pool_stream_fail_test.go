package crew_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// How a Stream reports a failure: no callback after the one that failed,
// and no task refused without an error from Wait.

// A job that found the next callback ready just as the deliverer's
// callback failed must not run it: the test holds the failing deliverer
// between moving past its callback and halting the stream, lets the next
// task end, holds that task's job as it tries for the deliverer's role,
// then lets the deliverer halt and give the role up before the job takes
// it.
func TestAStreamsCallbackAfterOneThatFailedNeverRunsWhateverTheInterleaving(t *testing.T) {
	boom := errors.New("boom")
	s := crew.NewStream(t.Context(), 2)
	var armed atomic.Bool
	atHalting, goHalting := make(chan struct{}), make(chan struct{})
	atClaiming, goClaiming := make(chan struct{}), make(chan struct{})
	crew.HoldStreamDeliverers(s, func() { // claiming
		if armed.CompareAndSwap(true, false) { // task 1's job, once callback 0 failed
			close(atClaiming)
			<-goClaiming
		}
	}, func() { // halting
		armed.Store(true)
		close(atHalting)
		<-goHalting
	})

	var ran1 atomic.Bool
	failed := make(chan context.Context, 1)
	end1 := make(chan struct{})
	require.NoError(t, s.Submit(t.Context(), func(ctx context.Context) (func() error, error) {
		failed <- ctx
		return func() error { return boom }, nil
	}))
	require.NoError(t, s.Submit(t.Context(), func(context.Context) (func() error, error) {
		<-end1
		return func() error { ran1.Store(true); return nil }, nil
	}))

	<-atHalting // callback 0 failed; its deliverer has not halted the stream yet
	close(end1)
	<-atClaiming // task 1 ended, and its job found callback 1 ready
	close(goHalting)
	<-(<-failed).Done() // the deliverer halted and gave the role up: its job failed, and canceled the stream
	close(goClaiming)

	assert.ErrorIs(t, s.Wait(), boom)
	assert.False(t, ran1.Load(), "callback 1 ran after callback 0 failed")
}

// A loop that stops at Submit's error expects Wait to say why: a task
// refused because the stream's context ended is a task never run.
func TestAStreamsWaitReportsATaskRefusedOnceItsContextEnded(t *testing.T) {
	cause := errors.New("the client went away")
	forms := map[string]func(context.Context) *crew.Stream{
		"NewStream": func(ctx context.Context) *crew.Stream { return crew.NewStream(ctx, 2) },
		"NewStreamBatch": func(ctx context.Context) *crew.Stream {
			p := crew.NewGroup(2)
			t.Cleanup(func() { assert.NoError(t, p.Wait()) })
			return crew.NewStreamBatch(ctx, p)
		},
	}
	for form, newStream := range forms {
		for _, submitWith := range []string{"another context", "the stream's context"} {
			t.Run(form+" with "+submitWith, func(t *testing.T) {
				ctx, cancel := context.WithCancelCause(t.Context())
				defer cancel(nil)
				s := newStream(ctx)
				var ran atomic.Int64
				done := make(chan struct{}, 3)
				for range 3 {
					require.NoError(t, s.Submit(ctx, func(context.Context) (func() error, error) {
						return func() error { ran.Add(1); done <- struct{}{}; return nil }, nil
					}))
				}
				for range 3 {
					<-done
				}
				cancel(cause)

				sctx := context.Background()
				want := cause
				if submitWith == "the stream's context" {
					sctx, want = ctx, context.Canceled
				}
				err := s.Submit(sctx, func(context.Context) (func() error, error) { return nil, nil })
				assert.ErrorIs(t, err, want, "Submit")
				assert.ErrorIs(t, s.Wait(), cause, "Wait")
				assert.Equal(t, int64(3), ran.Load())
			})
		}
	}
}

// A task refused because Submit's own context ended leaves the stream
// going: Wait reports no failure.
func TestAStreamsWaitIgnoresATaskRefusedOnlyBySubmitsOwnContext(t *testing.T) {
	s := crew.NewStream(t.Context(), 1, crew.WithWindow(1))
	release := make(chan struct{})
	require.NoError(t, s.Submit(t.Context(), func(context.Context) (func() error, error) {
		<-release
		return nil, nil
	}))
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, s.Submit(gone, func(context.Context) (func() error, error) { return nil, nil }), context.Canceled)
	close(release)
	assert.NoError(t, s.Wait())
}

// A Submit waiting for room in the window, with the stream's own context,
// wakes on that context's end and on the stream's at once: whichever it
// sees, the task is lost, and Wait says why. (Each round is a coin toss
// for the Submit's select; 20 rounds make it sure.)
func TestAStreamsWaitReportsATaskRefusedWhileItWaitedForRoom(t *testing.T) {
	cause := errors.New("the client went away")
	for range 20 {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancelCause(t.Context())
			s := crew.NewStream(ctx, 1, crew.WithWindow(1))
			release := make(chan struct{})
			require.NoError(t, s.Submit(ctx, func(context.Context) (func() error, error) { <-release; return nil, nil }))
			submitted := make(chan error)
			go func() {
				submitted <- s.Submit(ctx, func(context.Context) (func() error, error) { return nil, nil })
			}()
			synctest.Wait() // the window is full: Submit waits for room
			cancel(cause)
			assert.ErrorIs(t, <-submitted, context.Canceled)
			close(release)
			assert.ErrorIs(t, s.Wait(), cause)
		})
	}
}

// Submits that wait for room, or for their turn, when Wait begins are
// refused as after Wait (ErrBatchClosed): their tasks are not lost to the
// stream, whose Wait reports the stream's own outcome, the same each time.
func TestSubmitsThatRunIntoWaitAreRefusedNotLost(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(map[bool]string{false: "NewStream", true: "NewStreamBatch"}[shared], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var s *crew.Stream
				if shared {
					p := crew.NewGroup(1)
					defer func() { assert.NoError(t, p.Wait()) }()
					s = crew.NewStreamBatch(t.Context(), p, crew.WithWindow(1))
				} else {
					s = crew.NewStream(t.Context(), 1, crew.WithWindow(1))
				}
				release := make(chan struct{})
				require.NoError(t, s.Submit(t.Context(), func(context.Context) (func() error, error) { <-release; return nil, nil }))
				submitted := make(chan error, 2)
				for range 2 { // one waits for room, with the turn; the other for the turn
					go func() {
						submitted <- s.Submit(t.Context(), func(context.Context) (func() error, error) { return nil, nil })
					}()
				}
				synctest.Wait()
				waited := make(chan error, 1)
				go func() { waited <- s.Wait() }()
				synctest.Wait() // Wait waits for the first task
				close(release)
				assert.NoError(t, <-waited)
				assert.NoError(t, s.Wait(), "a second Wait returns the same")
				for range 2 {
					assert.ErrorIs(t, <-submitted, crew.ErrBatchClosed)
				}
			})
		})
	}
}

// Wait computes the stream's outcome once: a context that ends after it
// changes nothing.
func TestAStreamsWaitReturnsTheSameEachTime(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s := crew.NewStream(ctx, 1)
	gone, giveUp := context.WithCancel(t.Context())
	giveUp()
	assert.ErrorIs(t, s.Submit(gone, func(context.Context) (func() error, error) { return nil, nil }), context.Canceled)
	require.NoError(t, s.Wait(), "the caller gave the task up; the stream went on")
	cancel()
	assert.NoError(t, s.Wait())
}
