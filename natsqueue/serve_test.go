package natsqueue_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crewlib/crew/natsqueue"
	"github.com/crewlib/crew/natsqueue/natstest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestServeRunsEachJobOnceAndAcksIt(t *testing.T) {
	s := natstest.Server(t)
	link := &holdingLink{}
	q, err := natsqueue.Open[int](ctx(t), connectThrough(t, s, link), "jobs", natsqueue.WithAckWait(testAckWait))
	require.NoError(t, err)
	const n = 300
	tellAll(t, q, n)
	c := newTally(n)
	var calls atomic.Int32
	stop := serving(t, q, 4, func(_ context.Context, job int) error {
		if calls.Add(1) == n {
			// The last job: its ack, and what follows, stays in the
			// client until Serve asks the server for a round trip.
			link.hold()
		}
		c.ran(job, nil)
		return nil
	})
	c.wait(t)
	require.NoError(t, stop())
	link.cut() // as if the process exited: what the client held is lost
	runs, _ := c.snapshot()
	for i := range n {
		assert.Equal(t, 1, runs[i], "job %d", i)
	}
	// Serve returned once the server had received every ack; the server
	// applies them to the consumer a moment later.
	js := connect(t, s)
	eventually(t, func() bool { return consumerInfo(t, js).NumAckPending == 0 }, "every ack reached the server before Serve returned")
	ci := consumerInfo(t, js)
	assert.Zero(t, ci.NumPending)
	assert.Zero(t, ci.NumRedelivered)
	stream, err := js.Stream(ctx(t), "jobs")
	require.NoError(t, err)
	info, err := stream.Info(ctx(t))
	require.NoError(t, err)
	assert.Zero(t, info.State.Msgs, "a work queue drops acknowledged jobs")
}

func TestServeRetriesAnErrorAfterTheBackoff(t *testing.T) {
	_, _, q := open(t)
	tellAll(t, q, 1)
	const delay = 200 * time.Millisecond
	var mu sync.Mutex // guards attempts, at
	var attempts []int
	var at []time.Time
	backoff := func(attempt int) time.Duration {
		mu.Lock()
		attempts = append(attempts, attempt)
		mu.Unlock()
		return delay
	}
	c := newTally(1)
	var calls atomic.Int32
	stop := serving(t, q, 2, func(_ context.Context, job int) error {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		if calls.Add(1) < 3 {
			c.ran(job, errors.New("transient"))
			return errors.New("transient")
		}
		c.ran(job, nil)
		return nil
	}, natsqueue.WithBackoff(backoff))
	c.wait(t)
	require.NoError(t, stop())
	assert.Equal(t, []int{1, 2}, attempts, "the backoff gets the number of the failed delivery")
	require.Len(t, at, 3)
	assert.GreaterOrEqual(t, at[1].Sub(at[0]), delay*9/10, "redelivered after the backoff")
	assert.GreaterOrEqual(t, at[2].Sub(at[1]), delay*9/10, "redelivered after the backoff")
}

func TestServeRetriesAPanic(t *testing.T) {
	_, _, q := open(t)
	tellAll(t, q, 1)
	c := newTally(1)
	var calls atomic.Int32
	stop := serving(t, q, 1, failingOnce(c, &calls, func() error { panic("boom") }), natsqueue.WithBackoff(func(int) time.Duration { return 10 * time.Millisecond }))
	c.wait(t)
	require.NoError(t, stop())
	assert.EqualValues(t, 2, calls.Load())
}

func TestServeDeadLettersAPermanentFailureOnce(t *testing.T) {
	_, js, q := open(t)
	tellAll(t, q, 1)
	dl := newDeadLetters()
	failure := errors.New("no such account")
	var calls atomic.Int32
	stop := serving(t, q, 2, func(context.Context, int) error {
		calls.Add(1)
		return natsqueue.Permanent(failure)
	}, natsqueue.WithDeadLetters(dl.sink))
	d := dl.next(t)
	assert.ErrorIs(t, d.Reason, failure)
	assert.Equal(t, 0, d.Message)
	assert.Equal(t, "jobs", d.Target)
	eventually(t, func() bool { return consumerInfo(t, js).NumAckPending == 0 }, "terminated")
	require.NoError(t, stop())
	assert.EqualValues(t, 1, calls.Load(), "never retried")
	assert.Equal(t, 1, dl.count())
	assert.Zero(t, consumerInfo(t, js).NumPending)
}

func TestServeDeadLettersAnUndecodableMessage(t *testing.T) {
	_, js, q := open(t)
	_, err := js.Publish(ctx(t), natsqueue.Subject(q), []byte("not json"))
	require.NoError(t, err)
	dl := newDeadLetters()
	var calls atomic.Int32
	stop := serving(t, q, 2, func(context.Context, int) error { calls.Add(1); return nil },
		natsqueue.WithDeadLetters(dl.sink))
	d := dl.next(t)
	assert.ErrorIs(t, d.Reason, natsqueue.ErrUndecodable)
	assert.Equal(t, []byte("not json"), d.Message)
	eventually(t, func() bool { return consumerInfo(t, js).NumAckPending == 0 }, "terminated")
	require.NoError(t, stop())
	assert.Zero(t, calls.Load(), "the handler never sees it")
	assert.Equal(t, 1, dl.count())
}

func TestServeDeadLettersAJobThatFailsOnEveryAllowedDelivery(t *testing.T) {
	_, js, q := open(t)
	tellAll(t, q, 1)
	dl := newDeadLetters()
	var calls atomic.Int32
	failure := errors.New("still failing")
	stop := serving(t, q, 1, func(context.Context, int) error { calls.Add(1); return failure },
		natsqueue.WithDeadLetters(dl.sink), natsqueue.WithMaxDeliveries(3),
		natsqueue.WithBackoff(func(int) time.Duration { return 10 * time.Millisecond }))
	d := dl.next(t)
	assert.ErrorIs(t, d.Reason, natsqueue.ErrTooManyDeliveries)
	assert.ErrorIs(t, d.Reason, failure, "the last error is kept")
	eventually(t, func() bool { return consumerInfo(t, js).NumAckPending == 0 }, "terminated")
	require.NoError(t, stop())
	assert.EqualValues(t, 3, calls.Load())
	assert.Equal(t, 1, dl.count())
}

func TestServeKeepsALongJobFromBeingRedelivered(t *testing.T) {
	s, js, q := open(t)
	tellAll(t, q, 1)
	started, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	stop := serving(t, q, 1, func(context.Context, int) error {
		calls.Add(1)
		close(started)
		<-release
		return nil
	})
	<-started
	// A second consumer, as another process would be, waits for the job.
	var other atomic.Int32
	q2, err := natsqueue.Open[int](ctx(t), connect(t, s), "jobs", natsqueue.WithAckWait(testAckWait))
	require.NoError(t, err)
	stop2 := serving(t, q2, 1, func(context.Context, int) error { other.Add(1); return nil })
	// Held for three AckWaits: without progress signals it would have been
	// redelivered.
	timer := time.NewTimer(3 * testAckWait)
	<-timer.C
	close(release)
	eventually(t, func() bool { return consumerInfo(t, js).NumAckPending == 0 }, "acknowledged")
	require.NoError(t, stop())
	require.NoError(t, stop2())
	assert.EqualValues(t, 1, calls.Load())
	assert.Zero(t, other.Load())
	assert.Zero(t, consumerInfo(t, js).NumRedelivered)
}

func TestServeStopsGracefullyLosingAndDuplicatingNothing(t *testing.T) {
	_, js, q := open(t)
	const n = 200
	tellAll(t, q, n)
	c := newTally(n)
	var handled atomic.Int32
	halfway := make(chan struct{})
	var running atomic.Int32
	stop := serving(t, q, 4, func(ctx context.Context, job int) error {
		running.Add(1)
		defer running.Add(-1)
		if handled.Add(1) == n/4 {
			close(halfway)
		}
		// Long enough that Serve holds jobs not yet started when it stops.
		time.Sleep(time.Millisecond)
		c.ran(job, nil)
		return nil
	})
	<-halfway
	require.NoError(t, stop())
	assert.Zero(t, running.Load(), "no handler runs after Serve returns")
	// Serve flushed its acks to the server, which applies them a moment
	// later: well within AckWait, so none is redelivered.
	eventually(t, func() bool { return consumerInfo(t, js).NumAckPending == 0 }, "every job it took was run and acknowledged")
	ci := consumerInfo(t, js)
	_, ok := c.snapshot()
	assert.EqualValues(t, n-len(ok), ci.NumPending, "the rest wait in the queue")
	assert.Less(t, len(ok), n, "it stopped before the end")

	// Another Serve runs the rest; every job ran exactly once.
	stop = serving(t, q, 4, func(_ context.Context, job int) error { c.ran(job, nil); return nil })
	c.wait(t)
	require.NoError(t, stop())
	runs, _ := c.snapshot()
	for i := range n {
		assert.Equal(t, 1, runs[i], "job %d", i)
	}
	assert.Zero(t, consumerInfo(t, js).NumRedelivered)
}

func TestServeSurvivesAServerRestart(t *testing.T) {
	s, js, q := open(t)
	const n = 400
	c := newTally(n)
	var handled atomic.Int32
	some := make(chan struct{})
	stop := serving(t, q, 4, func(_ context.Context, job int) error {
		if handled.Add(1) == n/4 {
			close(some)
		}
		c.ran(job, nil)
		return nil
	})
	tellAll(t, q, n/2)
	<-some
	s = natstest.Restart(t, s)
	// Tell rides through the restart too: it retries until stored.
	for i := n / 2; i < n; i++ {
		require.NoError(t, q.Tell(ctx(t), i))
	}
	c.wait(t)
	require.NoError(t, stop())
	runs, _ := c.snapshot()
	dups := 0
	for i := range n {
		require.GreaterOrEqual(t, runs[i], 1, "job %d lost", i)
		dups += runs[i] - 1
	}
	t.Logf("duplicates after the restart (acks lost with the connection): %d", dups)
	eventually(t, func() bool { return consumerInfo(t, js).NumPending == 0 }, "queue drained")
	_ = s
}

func TestServeMisusePanics(t *testing.T) {
	_, _, q := open(t)
	noop := func(context.Context, int) error { return nil }
	assert.PanicsWithValue(t, "natsqueue: Serve: workers must be at least 1, got 0", func() {
		_ = natsqueue.Serve(context.Background(), q, 0, noop)
	})
	assert.PanicsWithValue(t, "natsqueue: Serve: nil handler", func() {
		_ = natsqueue.Serve(context.Background(), q, 1, nil)
	})
	assert.PanicsWithValue(t, "natsqueue: Serve: WithAckWait (for Open) does not apply", func() {
		_ = natsqueue.Serve(context.Background(), q, 1, noop, natsqueue.WithAckWait(time.Second))
	})
	assert.PanicsWithValue(t, "natsqueue: WithMaxDeliveries: 0 is less than 1", func() { natsqueue.WithMaxDeliveries(0) })
}
