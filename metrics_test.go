package crew_test

import (
	"context"
	"errors"
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

// metered is a Metrics that records what its sources report, for the
// tests to check against what they did.
type metered struct {
	mu      sync.Mutex
	sources []*meteredSource
}

// A meteredSource is what one source reported.
type meteredSource struct {
	src     crew.Source
	mu      sync.Mutex
	counts  map[crew.Event]int
	timings map[crew.Timing][]time.Duration
	tenants map[string]time.Duration // RunTime by tenant
	closed  int
	late    map[crew.Event]int // counts after Close
}

func (m *metered) Track(s crew.Source) crew.Recorder {
	r := &meteredSource{
		src:     s,
		counts:  make(map[crew.Event]int),
		timings: make(map[crew.Timing][]time.Duration),
		tenants: make(map[string]time.Duration),
		late:    make(map[crew.Event]int),
	}
	m.mu.Lock()
	m.sources = append(m.sources, r)
	m.mu.Unlock()
	return r
}

// only returns the one source tracked.
func (m *metered) only(t *testing.T) *meteredSource {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	require.Len(t, m.sources, 1, "Track is called once per source")
	return m.sources[0]
}

func (r *meteredSource) Add(e crew.Event, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n < 1 {
		panic("Add with n < 1")
	}
	if r.closed > 0 {
		r.late[e] += n
		return
	}
	r.counts[e] += n
}

func (r *meteredSource) Observe(t crew.Timing, d time.Duration, tenant string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed > 0 {
		panic("Observe after Close")
	}
	r.timings[t] = append(r.timings[t], d)
	if t == crew.RunTime {
		r.tenants[tenant] += d
	}
}

func (r *meteredSource) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed++
}

func (r *meteredSource) count(e crew.Event) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[e]
}

func (r *meteredSource) observed(t crew.Timing) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.timings[t]...)
}

func (r *meteredSource) closes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

func TestAPoolsMetricsCountEveryJobExactlyAfterWait(t *testing.T) {
	m := &metered{}
	p := crew.NewGroup(3, crew.WithName("counted"), crew.WithMetrics(m))
	ctx := context.Background()
	src := m.only(t)
	assert.Equal(t, crew.SourcePool, src.src.Kind)
	assert.Equal(t, "counted", src.src.Name)

	boom := errors.New("boom")
	const jobs = 200
	for i := range jobs {
		var job crew.Job
		switch i % 10 {
		case 3:
			job = failsWith(boom)
		case 5:
			job = func(context.Context) error { panic("kaboom") }
		case 7:
			if i == 7 { // a Goexit ends its worker: once
				job = func(context.Context) error { runtime.Goexit(); return nil }
				break
			}
			job = failsWith(boom)
		default:
			job = func(context.Context) error { return nil }
		}
		require.NoError(t, p.Submit(ctx, job))
	}
	b, bctx := p.NewBatch(ctx)
	for range 10 {
		require.NoError(t, b.Submit(bctx, func(context.Context) error { return nil }))
	}
	require.NoError(t, b.Wait())
	assert.Equal(t, 0, src.closes(), "a batch's Wait does not close its pool's metrics")
	assert.True(t, p.TrySubmit(func(context.Context) error { return nil }))
	require.Error(t, p.Wait())

	const all = jobs + 10 + 1
	assert.Equal(t, all, src.count(crew.EventSubmitted))
	assert.Equal(t, all, src.count(crew.EventCompleted))
	assert.Equal(t, 3*jobs/10, src.count(crew.EventFailed), "errors, panics and Goexits")
	assert.Equal(t, jobs/10, src.count(crew.EventPanicked))
	assert.Zero(t, src.count(crew.EventSkipped))
	assert.Zero(t, src.count(crew.EventDropped))
	assert.Len(t, src.observed(crew.QueueWait), all, "a queue wait for each job")
	assert.Len(t, src.observed(crew.RunTime), all, "a run time for each job, the Goexits' included")
	assert.Equal(t, 1, src.closes(), "Wait closes the recorder once")

	s := p.Stats()
	assert.Equal(t, int(s.Submitted), src.count(crew.EventSubmitted), "the counts agree with Stats")
	assert.Equal(t, int(s.Failed), src.count(crew.EventFailed))
	assert.Equal(t, crew.Gauges{}, src.src.Gauges(), "every worker stopped, nothing held")
}

func TestAPoolsGaugesShowItsJobsAndBlockedSubmits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &metered{}
		p := crew.NewGroup(2, crew.WithQueueSize(1), crew.WithMetrics(m)) // a bound of 4 jobs
		gauges := m.only(t).src.Gauges
		ctx := context.Background()
		release := make(chan struct{})
		hold := func(context.Context) error { <-release; return nil }
		synctest.Wait()
		assert.Equal(t, crew.Gauges{Workers: 2}, gauges())

		for range 4 {
			require.NoError(t, p.Submit(ctx, hold))
		}
		blocked := inBackground(func() error { return p.Submit(ctx, hold) })
		synctest.Wait() // two run, two wait, one Submit is blocked
		assert.Equal(t, crew.Gauges{Queued: 2, Running: 2, Workers: 2, Blocked: 1}, gauges())
		assert.Equal(t, 1, p.Stats().Blocked)

		close(release)
		require.NoError(t, <-blocked)
		require.NoError(t, p.Wait())
		assert.Equal(t, crew.Gauges{}, gauges())
	})
}

// The queue wait runs from the job's acceptance to its dispatch: a Submit
// blocked on a full pool is accepted once it is let in, not as it is
// called. In a bubble, a job that sleeps d runs exactly d.
func TestAPoolsQueueWaitRunsFromAcceptanceAndRunTimeIsTheJobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &metered{}
		p := crew.NewGroup(1, crew.WithQueueSize(1), crew.WithMetrics(m)) // a bound of 2 jobs
		src := m.only(t)
		ctx := context.Background()
		sleep := func(d time.Duration) crew.Job {
			return func(context.Context) error { time.Sleep(d); return nil }
		}
		require.NoError(t, p.Submit(ctx, sleep(10*time.Millisecond))) // runs at 0
		require.NoError(t, p.Submit(ctx, sleep(20*time.Millisecond))) // waits 10 ms
		blocked := inBackground(func() error { return p.Submit(ctx, sleep(time.Millisecond)) })
		synctest.Wait()
		require.NoError(t, <-blocked) // let in at 10 ms, as the first ends; starts at 30 ms
		require.NoError(t, p.Wait())

		assert.Equal(t, []time.Duration{0, 10 * time.Millisecond, 20 * time.Millisecond}, src.observed(crew.QueueWait))
		assert.Equal(t, []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, time.Millisecond}, src.observed(crew.RunTime))
	})
}

func TestAPoolsMetricsGiveEachTenantsRunTime(t *testing.T) {
	for name, opts := range map[string][]crew.Option{
		"a pool WithFairShare":            {crew.WithFairShare()},
		"a first come, first served pool": nil,
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := &metered{}
				p := crew.NewGroup(2, append(opts, crew.WithMetrics(m))...)
				src := m.only(t)
				ctx := context.Background()
				sleep := func(d time.Duration) crew.Job {
					return func(context.Context) error { time.Sleep(d); return nil }
				}
				for _, tenant := range []string{"a", "b", "a"} {
					b, bctx := p.NewBatch(ctx, crew.WithTenant(tenant), crew.WithWeight(3))
					for range 3 {
						require.NoError(t, b.Submit(bctx, sleep(time.Millisecond)))
					}
					require.NoError(t, b.Wait())
				}
				anon, actx := p.NewBatch(ctx)
				require.NoError(t, anon.Submit(actx, sleep(time.Millisecond)))
				require.NoError(t, anon.Wait())
				require.NoError(t, p.Submit(ctx, sleep(2*time.Millisecond)))
				require.NoError(t, p.Wait())

				src.mu.Lock()
				defer src.mu.Unlock()
				assert.Equal(t, map[string]time.Duration{"a": 6 * time.Millisecond, "b": 3 * time.Millisecond, "": 3 * time.Millisecond}, src.tenants,
					"per tenant, never per batch; the pool's own jobs and the batches without a tenant under \"\"")
			})
		})
	}
}

func TestAPoolsMetricsCountSkippedAndDroppedJobs(t *testing.T) {
	t.Run("skipped", func(t *testing.T) {
		m := &metered{}
		p, _ := crew.WithContext(context.Background(), 1, crew.WithQueueSize(8), crew.WithMetrics(m))
		started, release := make(chan struct{}), make(chan struct{})
		require.NoError(t, p.Submit(context.Background(), gated(started, release, errors.New("first"))))
		<-started
		for range 5 { // queued behind the failing job: skipped once it fails
			require.NoError(t, p.Submit(context.Background(), func(context.Context) error { return nil }))
		}
		close(release)
		require.Error(t, p.Wait())
		src := m.only(t)
		assert.Equal(t, 5, src.count(crew.EventSkipped))
		assert.Equal(t, int(p.Stats().Canceled), src.count(crew.EventSkipped))
		assert.Equal(t, 1, src.count(crew.EventCompleted))
		assert.Len(t, src.observed(crew.QueueWait), 1, "a skipped job never started")
	})
	t.Run("dropped", func(t *testing.T) {
		m := &metered{}
		handle, started, release := holdFirst()
		p := crew.NewPool(1, handle, crew.WithMetrics(m),
			crew.WithDeadLetters(func(crew.DeadLetter) {}),
			crew.WithMailbox(func() crew.Mailbox[int] { return crew.NewBounded[int](2, crew.DropOldest) }))
		require.NoError(t, p.Submit(context.Background(), 0))
		<-started
		for i := 1; i <= 5; i++ { // 1, 2 and 3 are evicted
			require.NoError(t, p.Submit(context.Background(), i))
		}
		close(release)
		require.NoError(t, p.Wait())
		src := m.only(t)
		assert.Equal(t, 3, src.count(crew.EventDropped))
		assert.Equal(t, int(p.Stats().Dropped), src.count(crew.EventDropped))
		assert.Equal(t, 6, src.count(crew.EventSubmitted))
		assert.Equal(t, 3, src.count(crew.EventCompleted))
		assert.Empty(t, src.observed(crew.QueueWait), "a mailbox of the user's keeps no time: no job's wait is observed, not even one handed straight to a worker")
		assert.Len(t, src.observed(crew.RunTime), 3)
	})
}

func TestAJobsOwnSubmitRunInlineIsCountedAndTimed(t *testing.T) {
	m := &metered{}
	p := crew.NewGroup(1, crew.WithQueueSize(1), crew.WithMetrics(m))
	var inner crew.Job = func(context.Context) error { return nil }
	require.NoError(t, p.Submit(context.Background(), func(ctx context.Context) error {
		for range 3 { // the pool holds 2: the last two run inline
			if err := p.Submit(ctx, inner); err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, p.Wait())
	src := m.only(t)
	assert.Equal(t, 2, int(p.Stats().Inline), "the pool holds the job and one more")
	assert.Equal(t, 4, src.count(crew.EventSubmitted))
	assert.Equal(t, 4, src.count(crew.EventCompleted))
	assert.Len(t, src.observed(crew.QueueWait), 4)
	assert.Len(t, src.observed(crew.RunTime), 4)
}

// blocking is a Recorder whose first Add of one event blocks until
// released, on whichever goroutine makes it.
type blocking struct {
	event   crew.Event
	first   atomic.Bool
	blocked chan struct{} // closed as the call blocks
	release chan struct{}
}

func (b *blocking) Track(crew.Source) crew.Recorder { return b }
func (b *blocking) Add(e crew.Event, _ int) {
	if e == b.event && b.first.CompareAndSwap(false, true) {
		close(b.blocked)
		<-b.release
	}
}
func (b *blocking) Observe(crew.Timing, time.Duration, string) {}
func (b *blocking) Close()                                     {}

// A Recorder that blocks stalls only the goroutine that called it: no
// call is made under the pool's lock.
func TestARecorderThatBlocksStallsNoOtherSubmitOrWorker(t *testing.T) {
	for _, event := range []crew.Event{crew.EventSubmitted, crew.EventCompleted} {
		t.Run(event.String(), func(t *testing.T) {
			b := &blocking{event: event, blocked: make(chan struct{}), release: make(chan struct{})}
			p := crew.NewGroup(2, crew.WithMetrics(b))
			ctx := context.Background()
			first := inBackground(func() error { return p.Submit(ctx, func(context.Context) error { return nil }) })
			<-b.blocked // in the first Submit, or on the worker that ran its job
			var ran sync.WaitGroup
			for range 50 { // more than the pool holds: they run on the other worker
				ran.Add(1)
				require.NoError(t, p.Submit(ctx, func(context.Context) error { ran.Done(); return nil }))
			}
			ran.Wait()
			close(b.release)
			require.NoError(t, <-first)
			require.NoError(t, p.Wait())
		})
	}
}

func TestAnActorsMetricsCountItsMessages(t *testing.T) {
	m := &metered{}
	ctx := context.Background()
	started, release := make(chan struct{}), make(chan struct{})
	actor := crew.Spawn(ctx, func(_ context.Context, v int) error {
		switch v {
		case 0:
			close(started)
			<-release
		case 1:
			return errors.New("one")
		case 2:
			panic("two")
		}
		return nil
	}, crew.WithName("counted"), crew.WithMetrics(m), crew.WithErrorHandler(func(error) {}),
		crew.WithDeadLetters(func(crew.DeadLetter) {}))
	src := m.only(t)
	assert.Equal(t, crew.SourceActor, src.src.Kind)
	for v := range 5 {
		require.NoError(t, actor.Tell(ctx, v))
	}
	<-started
	assert.Equal(t, crew.Gauges{Queued: 4, Running: 1, Workers: 1}, src.src.Gauges())
	close(release)
	actor.Drain()
	<-actor.Done()
	assert.Equal(t, 1, src.closes(), "closed once, as the actor ended")
	assert.ErrorIs(t, actor.Tell(ctx, 9), crew.ErrStopped)

	assert.Equal(t, 5, src.count(crew.EventSubmitted))
	assert.Equal(t, 5, src.count(crew.EventCompleted))
	assert.Equal(t, 2, src.count(crew.EventFailed))
	assert.Equal(t, 1, src.count(crew.EventPanicked))
	src.mu.Lock()
	assert.Equal(t, map[crew.Event]int{crew.EventDropped: 1}, src.late, "a Tell refused after the end: a dead letter, the one call after Close")
	src.mu.Unlock()
	assert.Equal(t, crew.Gauges{}, src.src.Gauges())
}

func TestARoutersMetricsAddUpItsRoutees(t *testing.T) {
	m := &metered{}
	ctx := context.Background()
	router := crew.SpawnRouter(ctx, 3, func(context.Context, int) error { return nil },
		crew.WithName("fleet"), crew.WithMetrics(m), crew.WithStrategy(crew.RoundRobin()))
	src := m.only(t)
	assert.Equal(t, crew.SourceRouter, src.src.Kind)
	assert.Equal(t, "fleet", src.src.Name)
	assert.Equal(t, 3, src.src.Gauges().Workers)
	for v := range 30 {
		require.NoError(t, router.Tell(ctx, v))
	}
	require.NoError(t, router.Broadcast(ctx, -1))
	router.Drain()
	<-router.Done()
	assert.Equal(t, 33, src.count(crew.EventSubmitted))
	assert.Equal(t, 33, src.count(crew.EventCompleted))
	assert.Equal(t, 1, src.closes(), "closed once, as its last routee ended")
	assert.Equal(t, crew.Gauges{}, src.src.Gauges())
}

// A Metrics may leave a source out, by returning nil.
type ignoring struct{ tracked int }

func (i *ignoring) Track(crew.Source) crew.Recorder { i.tracked++; return nil }

func TestATrackThatReturnsNilReportsNothing(t *testing.T) {
	m := &ignoring{}
	p := crew.NewGroup(1, crew.WithMetrics(m))
	require.NoError(t, p.Submit(context.Background(), func(context.Context) error { return nil }))
	require.NoError(t, p.Wait())
	a := crew.Spawn(context.Background(), func(context.Context, int) error { return nil }, crew.WithMetrics(m))
	require.NoError(t, a.Tell(context.Background(), 1))
	a.Drain()
	<-a.Done()
	assert.Equal(t, 2, m.tracked)
}

func TestWithMetricsMisuse(t *testing.T) {
	panicsWithCrewPrefix(t, func() { crew.WithMetrics(nil) })
	p := crew.NewGroup(1)
	defer p.Wait()
	panicsWithCrewPrefix(t, func() { p.NewBatch(context.Background(), crew.WithMetrics(&metered{})) })
}

func TestTheMetricsNamesPrint(t *testing.T) {
	assert.Equal(t, "submitted completed failed panicked skipped dropped",
		crew.EventSubmitted.String()+" "+crew.EventCompleted.String()+" "+crew.EventFailed.String()+" "+
			crew.EventPanicked.String()+" "+crew.EventSkipped.String()+" "+crew.EventDropped.String())
	assert.Equal(t, "queue_wait run_time", crew.QueueWait.String()+" "+crew.RunTime.String())
	assert.Equal(t, "pool actor router", crew.SourcePool.String()+" "+crew.SourceActor.String()+" "+crew.SourceRouter.String())
	assert.Equal(t, "Event(11)", crew.Event(11).String())
}

func TestAnActorsHandlerThatCallsGoexitIsCountedHandledAndFailed(t *testing.T) {
	m := &metered{}
	failed := make(chan error, 1)
	actor := crew.Spawn(context.Background(), func(context.Context, int) error { runtime.Goexit(); return nil },
		crew.WithMetrics(m), crew.WithErrorHandler(func(err error) { failed <- err }))
	require.NoError(t, actor.Tell(context.Background(), 1))
	assert.ErrorIs(t, <-failed, crew.ErrGoexit)
	actor.Stop()
	<-actor.Done()
	src := m.only(t)
	assert.Equal(t, 1, src.count(crew.EventSubmitted))
	assert.Equal(t, 1, src.count(crew.EventCompleted), "handled, as a pool counts a job that calls Goexit")
	assert.Equal(t, 1, src.count(crew.EventFailed))
	assert.Equal(t, 1, src.count(crew.EventReplaced), "a new goroutine took the actor on")
}

// A keyed router sends a message on under its lock: it counts the Tell
// once the lock is released.
func TestAKeyedRoutersRecorderThatBlocksStallsNoOtherTell(t *testing.T) {
	b := &blocking{event: crew.EventSubmitted, blocked: make(chan struct{}), release: make(chan struct{})}
	router := crew.SpawnRouter(context.Background(), 2, func(context.Context, int) error { return nil },
		crew.WithKey(func(v int) int { return v }), crew.WithMetrics(b))
	first := inBackground(func() error { return router.Tell(context.Background(), 1) })
	<-b.blocked
	other := inBackground(func() error { return router.Tell(context.Background(), 2) })
	select {
	case err := <-other:
		require.NoError(t, err)
	case <-time.After(10 * time.Second): // a hang guard, not an order
		t.Fatal("a Tell of another key waits for the blocked Recorder")
	}
	close(b.release)
	require.NoError(t, <-first)
	router.Drain()
	<-router.Done()
}

func TestARouterWhoseTrackReturnsNilTracksNoRoutee(t *testing.T) {
	m := &ignoring{}
	router := crew.SpawnRouter(context.Background(), 3, func(context.Context, int) error { return nil }, crew.WithMetrics(m))
	require.NoError(t, router.Tell(context.Background(), 1))
	router.Drain()
	<-router.Done()
	assert.Equal(t, 1, m.tracked, "the router, not its routees")
}

func TestABatchsJobRunInlineThatFailsIsCounted(t *testing.T) {
	m := &metered{}
	p := crew.NewGroup(1, crew.WithQueueSize(1), crew.WithMetrics(m))
	b, bctx := p.NewBatch(context.Background())
	require.NoError(t, b.Submit(bctx, func(ctx context.Context) error {
		for range 2 { // the pool holds 2: the second runs inline, fails, and skips the first
			_ = b.Submit(ctx, failsWith(errors.New("no")))
		}
		return nil
	}))
	require.Error(t, b.Wait())
	require.NoError(t, p.Wait())
	src := m.only(t)
	assert.Equal(t, 3, src.count(crew.EventSubmitted))
	assert.Equal(t, 2, src.count(crew.EventCompleted), "the outer job and the one run inline")
	assert.Equal(t, 1, src.count(crew.EventSkipped))
	assert.Equal(t, 1, src.count(crew.EventFailed), "the one run inline")
}

func TestASkippedJobWhoseDeadLetterSinkCallsGoexitIsCountedSkipped(t *testing.T) {
	m := &metered{}
	p, _ := crew.WithContext(context.Background(), 1, crew.WithQueueSize(4), crew.WithMetrics(m),
		crew.WithDeadLetters(func(crew.DeadLetter) { runtime.Goexit() }))
	started, release := make(chan struct{}), make(chan struct{})
	require.NoError(t, p.Submit(context.Background(), gated(started, release, errors.New("first"))))
	<-started
	require.NoError(t, p.Submit(context.Background(), func(context.Context) error { return nil })) // skipped once the first fails
	close(release)
	require.Error(t, p.Wait())
	src := m.only(t)
	s := p.Stats()
	assert.EqualValues(t, 1, s.Canceled)
	assert.Equal(t, 1, src.count(crew.EventSkipped))
	assert.Equal(t, int(s.Submitted), src.count(crew.EventSubmitted))
}

func TestAJobWhosePanicsHandlerCallsGoexitIsMeteredAsCompleted(t *testing.T) {
	// A job panics; the error handler the panic reaches calls
	// runtime.Goexit on the worker, whose goroutine is replaced. The job
	// still ended, and failed: the Recorder hears of it as Stats counts
	// it, with its run time, and Wait returns the panic.
	synctest.Test(t, func(t *testing.T) {
		m := &metered{}
		var once atomic.Bool
		p := crew.NewGroup(2, crew.WithMetrics(m), crew.WithErrorHandler(func(error) {
			if once.CompareAndSwap(false, true) {
				runtime.Goexit()
			}
		}))
		require.NoError(t, p.Submit(context.Background(), func(context.Context) error { explode(); return nil }))
		err := p.Wait()
		var rec *panics.ErrRecovered
		assert.ErrorAs(t, err, &rec)
		src := m.only(t)
		s := p.Stats()
		assert.EqualValues(t, 1, s.Completed)
		assert.EqualValues(t, 1, s.Failed)
		assert.EqualValues(t, 1, s.Replaced)
		assert.Equal(t, 1, src.count(crew.EventCompleted))
		assert.Equal(t, 1, src.count(crew.EventReplaced))
		assert.Len(t, src.observed(crew.RunTime), 1)
	})
}

// A pool's Stats and its Metrics count the same jobs, those its batches'
// jobs ran inline included, so that a dashboard built on one and an alert
// built on the other agree once Wait has returned.
func TestAPoolsStatsAndMetricsCountTheSameJobs(t *testing.T) {
	m := &metered{}
	p := crew.NewGroup(1, crew.WithQueueSize(1), crew.WithMetrics(m))
	b, bctx := p.NewBatch(context.Background())
	require.NoError(t, b.Submit(bctx, func(ctx context.Context) error {
		// The pool holds this job and the next; it is full, so the
		// batch's job runs the second inline. It panics, which skips
		// the one queued and refuses the third.
		_ = b.Submit(ctx, failsWith(errors.New("no")))
		_ = b.Submit(ctx, func(context.Context) error { panic("kaboom") })
		_ = b.Submit(ctx, failsWith(errors.New("no")))
		return nil
	}))
	require.Error(t, b.Wait())
	require.NoError(t, p.Submit(context.Background(), func(ctx context.Context) error {
		_ = p.Submit(ctx, failsWith(errors.New("no")))    // queued
		return p.Submit(ctx, failsWith(errors.New("no"))) // the pool is full: run inline
	}))
	require.Error(t, p.Wait())
	s, src := p.Stats(), m.only(t)
	bs := b.Stats()
	for _, c := range []struct {
		name  string
		stats int64
		event crew.Event
	}{
		{"Submitted", s.Submitted, crew.EventSubmitted},
		{"Completed", s.Completed, crew.EventCompleted},
		{"Failed", s.Failed, crew.EventFailed},
		{"Panicked", s.Panicked, crew.EventPanicked},
		{"Canceled", s.Canceled, crew.EventSkipped},
		{"Dropped", s.Dropped, crew.EventDropped},
	} {
		assert.EqualValues(t, src.count(c.event), c.stats, "Stats.%s against the Recorder's %s", c.name, c.event)
	}
	assert.Positive(t, bs.Inline, "the batch's jobs ran some inline")
	assert.Equal(t, bs.Inline+1, s.Inline, "the pool's Inline: its batch's, and its own job's")
	assert.Equal(t, s.Submitted, s.Completed+s.Canceled+s.Dropped)
}

// gatedSubmits is a Metrics whose Recorder, as it counts the first
// Submit's job, says so on counting and waits for release: the Submit's
// count then comes after the job's end, as it does when the Submit's
// goroutine is descheduled at that moment.
type gatedSubmits struct {
	metered
	counting, release chan struct{}
	once              sync.Once
}

func (m *gatedSubmits) Track(s crew.Source) crew.Recorder {
	return gatedRecorder{m.metered.Track(s).(*meteredSource), m}
}

type gatedRecorder struct {
	*meteredSource
	m *gatedSubmits
}

func (r gatedRecorder) Add(e crew.Event, n int) {
	if e == crew.EventSubmitted {
		r.m.once.Do(func() {
			close(r.m.counting)
			<-r.m.release
		})
	}
	r.meteredSource.Add(e, n)
}

func TestAPoolsRecorderClosesOnlyOnceEverySubmitCountedItsJob(t *testing.T) {
	m := &gatedSubmits{counting: make(chan struct{}), release: make(chan struct{})}
	p := crew.NewGroup(1, crew.WithMetrics(m))
	src := m.only(t)
	submitted := make(chan error)
	go func() { submitted <- p.Submit(context.Background(), func(context.Context) error { return nil }) }()
	<-m.counting // the job was accepted; its Submit counts it now
	require.NoError(t, p.Wait(), "Wait returns once the job ended, its Submit's count still under way")
	assert.Equal(t, 0, src.closes(), "closed before the Submit counted its job")
	close(m.release)
	require.NoError(t, <-submitted)
	assert.Equal(t, 1, src.closes(), "the Submit that counted the last job closes the Recorder")
	assert.Empty(t, src.late, "a count after Close")
	assert.Equal(t, 1, src.count(crew.EventSubmitted))
}
