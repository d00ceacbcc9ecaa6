package natsqueue_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crewlib/crew/natsqueue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorded is a Metrics, and the Recorder it returns, that keeps what it
// is told; acks, if not nil, receives a value per ack counted, and done
// is closed by the first Close.
type recorded struct {
	mu      sync.Mutex // guards sources, counts, timings, closed, late
	sources []natsqueue.Source
	counts  map[natsqueue.Event]int
	timings map[natsqueue.Timing][]time.Duration
	closed  int // calls of Close
	late    int // calls after Close
	acks    chan struct{}
	done    chan struct{}
}

func newRecorded() *recorded {
	return &recorded{counts: map[natsqueue.Event]int{}, timings: map[natsqueue.Timing][]time.Duration{}, done: make(chan struct{})}
}

func (m *recorded) Track(s natsqueue.Source) natsqueue.Recorder {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sources = append(m.sources, s)
	return m
}

func (m *recorded) Add(e natsqueue.Event, n int) {
	m.mu.Lock()
	m.late += m.closed
	m.counts[e] += n
	m.mu.Unlock()
	if e == natsqueue.EventAck && m.acks != nil {
		m.acks <- struct{}{}
	}
}

func (m *recorded) Observe(t natsqueue.Timing, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.late += m.closed
	m.timings[t] = append(m.timings[t], d)
}

func (m *recorded) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed++; m.closed == 1 {
		close(m.done)
	}
}

func TestServeReportsDeliveriesAcksNaksAndDeadLetters(t *testing.T) {
	_, js, q := open(t)
	const (
		failOnce  = 10
		permanent = 20
		backoff   = 200 * time.Millisecond
	)
	before := time.Now()
	for _, job := range []int{1, 2, 3, failOnce, permanent} {
		require.NoError(t, q.Tell(ctx(t), job))
	}
	_, err := js.Publish(ctx(t), natsqueue.Subject(q), []byte("not json"))
	require.NoError(t, err)

	m := newRecorded()
	c := newTally(4)
	dl := newDeadLetters()
	var failed atomic.Bool
	stop := serving(t, q, 2, func(_ context.Context, job int) error {
		switch {
		case job == permanent:
			return natsqueue.Permanent(errors.New("no such account"))
		case job == failOnce && !failed.Swap(true):
			c.ran(job, errors.New("transient"))
			return errors.New("transient")
		}
		c.ran(job, nil)
		return nil
	}, natsqueue.WithMetrics(m), natsqueue.WithDeadLetters(dl.sink),
		natsqueue.WithBackoff(func(int) time.Duration { return backoff }))
	c.wait(t)
	dl.next(t)
	dl.next(t)
	require.NoError(t, stop())
	elapsed := time.Since(before)

	m.mu.Lock()
	defer m.mu.Unlock()
	assert.Equal(t, []natsqueue.Source{{Queue: "jobs"}}, m.sources, "tracked once, by its queue's name")
	assert.Equal(t, 1, m.closed, "closed as Serve returned")
	assert.Zero(t, m.late, "no call after Close")
	assert.Equal(t, map[natsqueue.Event]int{
		natsqueue.EventDelivery:   6, // 5 jobs and the undecodable message
		natsqueue.EventRedelivery: 1, // the job that failed once
		natsqueue.EventAck:        4,
		natsqueue.EventNak:        1,
		natsqueue.EventDeadLetter: 2, // the permanent failure and the undecodable message
	}, m.counts)
	assert.Equal(t, []time.Duration{backoff}, m.timings[natsqueue.NakDelay], "the nak's backoff")
	assert.Len(t, m.timings[natsqueue.RunTime], 6, "each handler call: 3 jobs, one job twice, the permanent failure")
	tellToAck := m.timings[natsqueue.TellToAck]
	require.Len(t, tellToAck, 4, "one per ack")
	for _, d := range tellToAck {
		assert.GreaterOrEqual(t, d, time.Duration(0))
		assert.LessOrEqual(t, d, elapsed, "from a Tell made since the test began")
	}
	assert.GreaterOrEqual(t, slices.Max(tellToAck), backoff, "the retried job's includes its first run and backoff")
}

func TestServeCountsAJobThatEndsAfterItsContextBeforeClose(t *testing.T) {
	_, _, q := open(t)
	tellAll(t, q, 1)
	m := newRecorded()
	started := make(chan struct{})
	stop := serving(t, q, 1, func(context.Context, int) error {
		close(started)
		// Serve calls Close after its last job has ended, so this waits
		// out the timer; the timer bounds the wait for a Close that must
		// not come, and orders nothing.
		select {
		case <-m.done:
		case <-time.After(time.Second):
		}
		return nil
	}, natsqueue.WithMetrics(m))
	<-started
	require.NoError(t, stop())
	m.mu.Lock()
	defer m.mu.Unlock()
	assert.Equal(t, map[natsqueue.Event]int{natsqueue.EventDelivery: 1, natsqueue.EventAck: 1}, m.counts)
	assert.Len(t, m.timings[natsqueue.TellToAck], 1)
	assert.Equal(t, 1, m.closed)
	assert.Zero(t, m.late, "no call after Close")
}

// blocking is a recorded whose first ack count blocks until gate closes;
// blocked is closed as it blocks.
type blocking struct {
	*recorded
	first   atomic.Bool // an ack has been counted; not a sync.Once, whose Do would hold the other callers too
	blocked chan struct{}
	gate    chan struct{}
}

func (b *blocking) Track(s natsqueue.Source) natsqueue.Recorder {
	b.recorded.Track(s)
	return b
}

func (b *blocking) Add(e natsqueue.Event, n int) {
	if e == natsqueue.EventAck && b.first.CompareAndSwap(false, true) {
		close(b.blocked)
		<-b.gate
	}
	b.recorded.Add(e, n)
}

func TestServeGoesOnWhileARecorderBlocksOneWorker(t *testing.T) {
	_, _, q := open(t)
	m := &blocking{recorded: newRecorded(), blocked: make(chan struct{}), gate: make(chan struct{})}
	m.acks = make(chan struct{}, 100)
	const n = 20
	c := newTally(n)
	tellAll(t, q, 1)
	stop := serving(t, q, 2, func(_ context.Context, job int) error { c.ran(job, nil); return nil },
		natsqueue.WithMetrics(m))
	var release sync.Once
	t.Cleanup(func() { release.Do(func() { close(m.gate) }) }) // before serving's stop, if the test fails
	select {
	case <-m.blocked:
	case <-time.After(testTimeout):
		t.Fatal("the first ack was not counted")
	}
	for i := 1; i < n; i++ {
		require.NoError(t, q.Tell(ctx(t), i))
	}
	// The other worker runs and acks the rest while the first is held.
	c.wait(t)
	for i := 1; i < n; i++ {
		select {
		case <-m.acks:
		case <-time.After(testTimeout):
			t.Fatalf("%d acks counted while one worker's Recorder call was blocked, want %d", i-1, n-1)
		}
	}
	release.Do(func() { close(m.gate) })
	require.NoError(t, stop())
	m.mu.Lock()
	defer m.mu.Unlock()
	assert.Equal(t, n, m.counts[natsqueue.EventAck])
}

func TestWithMetricsMisusePanics(t *testing.T) {
	_, js, _ := open(t)
	assert.PanicsWithValue(t, "natsqueue: WithMetrics: nil Metrics", func() { natsqueue.WithMetrics(nil) })
	assert.PanicsWithValue(t, "natsqueue: Open: WithMetrics (for Serve) does not apply", func() {
		_, _ = natsqueue.Open[int](ctx(t), js, "jobs", natsqueue.WithMetrics(newRecorded()))
	})
}

func TestServeRunsWithAMetricsThatTracksNothing(t *testing.T) {
	_, _, q := open(t)
	c := newTally(1)
	tellAll(t, q, 1)
	stop := serving(t, q, 1, func(_ context.Context, job int) error { c.ran(job, nil); return nil },
		natsqueue.WithMetrics(nothing{}))
	c.wait(t)
	require.NoError(t, stop())
}

// nothing is a Metrics whose Track returns nil.
type nothing struct{}

func (nothing) Track(natsqueue.Source) natsqueue.Recorder { return nil }
