package crew_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// recorder keeps the order in which jobs ran.
type recorder struct {
	mu  sync.Mutex
	ran []int
}

func (r *recorder) add(v int) {
	r.mu.Lock()
	r.ran = append(r.ran, v)
	r.mu.Unlock()
}

func (r *recorder) get() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ran)
}

func TestAFreeWorkerRunsTheQueuedJobsInSubmissionOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Two workers, one held by a job that ends only once the rest have run:
		// the other must run every job queued meanwhile, in the order of the
		// Submits, none waiting behind the held one.
		held, hold := make(chan struct{}), make(chan struct{})
		var rec recorder
		p := crew.NewPool(2, func(_ context.Context, v int) error {
			if v < 0 {
				close(held)
				<-hold
				return nil
			}
			rec.add(v)
			return nil
		}, crew.WithQueueSize(100))
		ctx := context.Background()
		require.NoError(t, p.Submit(ctx, -1))
		<-held
		want := make([]int, 100)
		for v := range want {
			want[v] = v
			require.NoError(t, p.Submit(ctx, v))
		}
		synctest.Wait()
		require.Len(t, rec.get(), len(want), "jobs waited behind the held one")
		close(hold)
		require.NoError(t, p.Wait())
		assert.Equal(t, want, rec.get())
	})
}

func TestAFailureSkipsNoJobSubmittedBeforeIt(t *testing.T) {
	// The errgroup fetcher: 8 workers, 300 jobs, a few slow ones (they run
	// until the failure cancels the group) scattered before the one that
	// fails. Every job submitted before the failing one must have started.
	const jobs, failing = 300, 200
	boom := errors.New("boom")
	for run := range 50 {
		var started [jobs]atomic.Bool
		p, ctx := crew.WithContext(context.Background(), 8)
		for i := range jobs {
			err := p.Submit(ctx, func(ctx context.Context) error {
				started[i].Store(true)
				switch {
				case i == failing:
					return boom
				case i%40 == 7: // 5 slow jobs before the failure, fewer than the workers
					<-ctx.Done()
					return ctx.Err()
				}
				return nil
			})
			if err != nil {
				break // the group failed
			}
		}
		require.Same(t, boom, p.Wait())
		for i := range failing {
			if !started[i].Load() {
				t.Fatalf("run %d: job %d, submitted before the failing job %d, never started", run, i, failing)
			}
		}
	}
}

func TestJobsThatWaitForEachOtherAllStart(t *testing.T) {
	// n jobs on n workers, each waiting until all have started: every job
	// must reach a worker, in every one of many fresh pools.
	runs := 1000
	if testing.Short() {
		runs = 100
	}
	for _, n := range []int{2, 8} {
		for run := range runs {
			p := crew.NewGroup(n)
			var arrived atomic.Int32
			all, giveUp := make(chan struct{}), make(chan struct{})
			for range n {
				require.NoError(t, p.Submit(context.Background(), func(context.Context) error {
					if arrived.Add(1) == int32(n) {
						close(all)
					}
					select {
					case <-all:
					case <-giveUp:
					}
					return nil
				}))
			}
			select {
			case <-all:
				require.NoError(t, p.Wait())
			case <-time.After(10 * time.Second): // a bound on failure, not an order of events
				got := arrived.Load()
				close(giveUp)
				require.NoError(t, p.Wait())
				t.Fatalf("%d workers, pool %d: only %d of %d jobs started", n, run, got, n)
			}
		}
	}
}

// A pjob is a job of a priority or fair pool.
type pjob struct {
	id     int
	urgent bool
	tenant string
	gate   chan struct{} // if set, the job runs until it is closed
	start  chan struct{} // if set, closed when the job starts
}

// pjobHandler records the ids of the jobs without a gate, in the order
// they run.
func pjobHandler(rec *recorder) func(context.Context, pjob) error {
	return func(_ context.Context, j pjob) error {
		if j.start != nil {
			close(j.start)
		}
		if j.gate != nil {
			<-j.gate
			return nil
		}
		rec.add(j.id)
		return nil
	}
}

// holdTwo submits two gated jobs, one for each of a pool's two workers,
// and returns once both run.
func holdTwo(t *testing.T, p *crew.Pool[pjob]) (gateA, gateB chan struct{}) {
	gateA, gateB = make(chan struct{}), make(chan struct{})
	for _, gate := range []chan struct{}{gateA, gateB} {
		start := make(chan struct{})
		require.NoError(t, p.Submit(context.Background(), pjob{gate: gate, start: start}))
		<-start
	}
	return gateA, gateB
}

func TestAPriorityBacklogOrdersTheWholePool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// One worker held, the other busy while normal jobs and then an urgent
		// one queue: the worker that frees first runs the urgent job first.
		var rec recorder
		p := crew.NewPool(2, pjobHandler(&rec), crew.WithMailbox(func() crew.Mailbox[pjob] {
			return crew.NewStablePriority(func(a, b pjob) bool { return a.urgent && !b.urgent })
		}))
		gateA, gateB := holdTwo(t, p)
		ctx := context.Background()
		for id := range 6 {
			require.NoError(t, p.Submit(ctx, pjob{id: id}))
		}
		require.NoError(t, p.Submit(ctx, pjob{id: 99, urgent: true}))
		close(gateB)
		synctest.Wait()
		require.Len(t, rec.get(), 7)
		close(gateA)
		require.NoError(t, p.Wait())
		assert.Equal(t, []int{99, 0, 1, 2, 3, 4, 5}, rec.get(), "the urgent job first, then the others in order")
	})
}

func TestAFairBacklogSharesTheWholePool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// One worker held, the other busy while a loud tenant queues six jobs
		// and a quiet one queues one: the quiet tenant's job runs second, not
		// after all the loud ones.
		var rec recorder
		p := crew.NewPool(2, pjobHandler(&rec), crew.WithMailbox(func() crew.Mailbox[pjob] {
			return crew.NewFair(func(j pjob) string { return j.tenant })
		}))
		gateA, gateB := holdTwo(t, p)
		ctx := context.Background()
		for id := range 6 {
			require.NoError(t, p.Submit(ctx, pjob{id: id, tenant: "loud"}))
		}
		require.NoError(t, p.Submit(ctx, pjob{id: 99, tenant: "quiet"}))
		close(gateB)
		synctest.Wait()
		require.Len(t, rec.get(), 7)
		close(gateA)
		require.NoError(t, p.Wait())
		assert.Equal(t, []int{0, 99, 1, 2, 3, 4, 5}, rec.get(), "the tenants take turns")
	})
}

func TestAFailMailboxRefusesNoJobWhileAWorkerIsIdle(t *testing.T) {
	// A backlog of one that refuses when full, one worker held: each job
	// submitted once the other worker is idle must be accepted, whatever
	// the strategy.
	for _, s := range []struct {
		name     string
		strategy crew.Strategy
	}{
		{"RoundRobin", crew.RoundRobin()},
		{"Random", crew.Random()},
		{"SmallestMailbox", crew.SmallestMailbox()},
	} {
		t.Run(s.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				handle, started, release := holdFirst()
				p := crew.NewPool(2, handle, crew.WithStrategy(s.strategy),
					crew.WithMailbox(func() crew.Mailbox[int] { return crew.NewBounded[int](1, crew.Fail) }))
				ctx := context.Background()
				require.NoError(t, p.Submit(ctx, 0))
				<-started
				for v := 1; v <= 20; v++ {
					synctest.Wait()
					require.Equal(t, 1, crew.PoolIdle(p))
					require.NoError(t, p.Submit(ctx, v), "job %d, with a worker idle", v)
				}
				close(release)
				require.NoError(t, p.Wait())
				assert.EqualValues(t, 21, p.Stats().Completed)
			})
		})
	}
}

func TestTheStrategyPicksAmongIdleWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Four idle workers at every Submit: RoundRobin hands the jobs to them
		// in turn.
		var rec recorder
		p := crew.NewPool(4, func(ctx context.Context, _ int) error {
			rec.add(crew.WorkerIndex(ctx))
			return nil
		}, crew.WithStrategy(crew.RoundRobin()))
		for v := range 12 {
			synctest.Wait()
			require.Equal(t, 4, crew.PoolIdle(p))
			require.NoError(t, p.Submit(context.Background(), v))
		}
		require.NoError(t, p.Wait())
		assert.Equal(t, []int{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}, rec.get())
		s := p.Stats()
		assert.Zero(t, s.Backlogged, "every job went straight to an idle worker")
	})
}

func TestStatsCountTheJobsThatWaitedInTheBacklog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		handle, started, release := holdFirst()
		p := crew.NewPool(1, handle, crew.WithQueueSize(5))
		ctx := context.Background()
		synctest.Wait()
		require.Equal(t, 1, crew.PoolIdle(p), "the worker has started")
		require.NoError(t, p.Submit(ctx, 0)) // handed to the idle worker
		<-started
		for v := 1; v <= 3; v++ {
			require.NoError(t, p.Submit(ctx, v))
		}
		s := p.Stats()
		assert.Equal(t, 3, s.Queued)
		assert.Equal(t, 1, s.Running)
		close(release)
		require.NoError(t, p.Wait())
		s = p.Stats()
		assert.EqualValues(t, 3, s.Backlogged)
		assert.EqualValues(t, 4, s.Completed)
		assert.EqualValues(t, 4, s.Submitted)
	})
}

func TestABlockedSubmitIsRefusedWhenThePoolFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("boom")
		p, ctx := crew.WithContext(context.Background(), 1, crew.WithQueueSize(1))
		started, release := make(chan struct{}, 1), gateFor(t)
		require.NoError(t, p.Submit(ctx, gated(started, release, boom)))
		<-started
		require.NoError(t, p.Submit(ctx, func(context.Context) error { return nil })) // the pool is full
		errc := make(chan error, 1)
		go func() { errc <- p.Submit(context.Background(), func(context.Context) error { return nil }) }()
		synctest.Wait()
		require.Equal(t, 1, crew.PoolBlocked(p))
		close(release)
		assert.ErrorIs(t, <-errc, context.Canceled, "the group's context ended: the job would not run")
		assert.Same(t, boom, p.Wait())
		assert.EqualValues(t, 1, p.Stats().Canceled)
	})
}

func TestAHugeQueueSizeDoesNotOverflowTheBound(t *testing.T) {
	p := crew.NewGroup(3, crew.WithQueueSize(math.MaxInt))
	for range 10 {
		require.True(t, p.TrySubmit(func(context.Context) error { return nil }))
	}
	require.NoError(t, p.Wait())
}

// WithQueueSize(n) bounds a pool at workers×(1+n) jobs, that many exactly,
// on 32-bit platforms as on 64-bit ones (it was capped at 127 per worker
// there), and Resize moves the bound with the workers. A bound too large
// for an int is none: the pool takes every job, before and after Resize.
func TestAQueueSizeIsHeldWhole(t *testing.T) {
	// taken makes a pool of one worker WithQueueSize(size), resizes it to
	// workers, keeps each worker busy, and returns how many of up to try
	// more jobs it takes.
	taken := func(size, workers, try int) int {
		release, started := gateFor(t), make(chan struct{}, workers)
		p := crew.NewGroup(1, crew.WithQueueSize(size))
		defer func() {
			close(release)
			require.NoError(t, p.Wait())
		}()
		if workers > 1 {
			p.Resize(workers)
		}
		for range workers {
			require.True(t, p.TrySubmit(gated(started, release, nil)))
			<-started
		}
		n := 0
		for range try {
			if !p.TrySubmit(func(context.Context) error { return nil }) {
				break
			}
			n++
		}
		return n
	}
	const size = 1000
	assert.Equal(t, size, taken(size, 1, 2*size), "jobs taken beside the one running, one worker")
	assert.Equal(t, 2*size, taken(size, 2, 3*size), "jobs taken beside the two running, once Resize made two workers")
	huge := 1 << (strconv.IntSize - 2) // 1×(1+huge) is an int; 4×(1+huge) wraps around to 4
	assert.Equal(t, 100, taken(huge, 4, 100), "jobs taken beside the four running by a pool whose bound is too large to hold")
}

// WithQueueSize(0) is errgroup's SetLimit bound: a pool of n workers holds
// n jobs, each running or handed to a worker, and the next Submit waits
// until one of them ends, while TrySubmit refuses it. Resize moves the
// bound with the workers.
func TestAQueueSizeOfZeroHoldsNoJobBeyondTheWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const workers = 3
		ctx := context.Background()
		started := make(chan struct{}, workers+2)
		first, rest := gateFor(t), gateFor(t)
		p := crew.NewGroup(workers, crew.WithQueueSize(0))
		require.NoError(t, p.Submit(ctx, gated(started, first, nil)))
		for range workers - 1 {
			require.NoError(t, p.Submit(ctx, gated(started, rest, nil)))
		}
		synctest.Wait()
		require.Len(t, started, workers, "every worker runs a job")
		assert.False(t, p.TrySubmit(gated(started, rest, nil)), "no room beside the jobs running")

		submitted := inBackground(func() error { return p.Submit(ctx, gated(started, rest, nil)) })
		synctest.Wait()
		assert.Equal(t, 1, crew.PoolBlocked(p), "the next Submit waits for a worker")
		close(first)
		require.NoError(t, <-submitted, "the first job's end let it in")
		synctest.Wait()
		assert.Len(t, started, workers+1, "and it runs")
		s := p.Stats()
		assert.Equal(t, workers, s.Running)
		assert.Zero(t, s.Queued, "nothing waits beside the jobs running")
		assert.False(t, p.TrySubmit(gated(started, rest, nil)), "full again")

		p.Resize(workers + 1)
		assert.True(t, p.TrySubmit(gated(started, rest, nil)), "a worker more, a job more")
		assert.False(t, p.TrySubmit(gated(started, rest, nil)))
		close(rest)
		require.NoError(t, p.Wait())
	})
}

func TestMapReturnsTheCauseOfItsContext(t *testing.T) {
	// The calls return ctx.Err() when ctx ends, as well-behaved functions
	// do: Map must still say why ctx ended.
	cause := errors.New("shutting down")
	ctx, cancel := context.WithCancelCause(context.Background())
	var calls atomic.Int32
	started := make(chan struct{})
	go func() {
		<-started
		cancel(cause)
	}()
	out, err := crew.Map(ctx, 2, []int{1, 2, 3, 4}, func(ctx context.Context, v int) (int, error) {
		if calls.Add(1) == 1 {
			close(started)
		}
		<-ctx.Done()
		return 0, ctx.Err()
	})
	assert.Same(t, cause, err)
	assert.Equal(t, []int{0, 0, 0, 0}, out, "no call returned nil")
}

func TestOptionsThatDoNotApplyPanic(t *testing.T) {
	ctx := context.Background()
	handle := func(context.Context, int) error { return nil }
	for _, tc := range []struct {
		want string
		call func()
	}{
		{"crew: Spawn: WithStrategy (for routers and pools) does not apply",
			func() { crew.Spawn(ctx, handle, crew.WithStrategy(crew.RoundRobin())) }},
		{"crew: Spawn: WithQueueSize (for pools) does not apply",
			func() { crew.Spawn(ctx, handle, crew.WithQueueSize(2)) }},
		{"crew: SpawnRouter: WithAllErrors (for pools and batches) does not apply",
			func() { crew.SpawnRouter(ctx, 2, handle, crew.WithAllErrors()) }},
		{"crew: NewBatch: WithErrorHandler (for actors, routers and pools) does not apply",
			func() {
				p := crew.NewPool(1, handle)
				defer p.Wait()
				p.NewBatch(ctx, crew.WithErrorHandler(func(error) {}))
			}},
		{"crew: WithContext: WithParent (for pools) does not apply",
			func() { crew.WithContext(ctx, 2, crew.WithParent(ctx)) }},
		{"crew: Map: WithMailbox does not apply",
			func() {
				_, _ = crew.Map(ctx, 1, []int{1}, func(context.Context, int) (int, error) { return 1, nil },
					crew.WithMailbox(func() crew.Mailbox[int] { return crew.NewUnbounded[int]() }))
			}},
	} {
		assert.PanicsWithValue(t, tc.want, tc.call)
	}
}

func TestAKeyedPoolSpreadsItsKeysOverTheWorkers(t *testing.T) {
	// 50 accounts with 200 transactions each, from 4 submitters, on 8
	// workers; each transaction takes ~20 µs. Each account's transactions
	// run in order, one at a time, the busiest worker runs at most twice
	// its share, and all but two at most run some: the keys are spread,
	// not pinned to a few workers.
	// (Which worker is idle when a job comes is the Go scheduler's doing:
	// on 2 CPUs beside other load the busiest ran up to 1.5 times its
	// share, so a tighter bound tests the machine, not the pool.)
	const accounts, each, workers = 50, 200, 8
	order := newKeyOrder(accounts)
	p := crew.NewPool(workers, func(_ context.Context, j keyedJob) error {
		order.start(j)
		spin(20 * time.Microsecond)
		order.end(j)
		return nil
	}, crew.WithKey(jobKey))
	// Each submitter owns some accounts, so that every account's
	// transactions are submitted in order.
	var wg sync.WaitGroup
	for s := range 4 {
		wg.Go(func() {
			for seq := range each {
				for k := s; k < accounts; k += 4 {
					if err := p.Submit(context.Background(), keyedJob{key: k, seq: seq}); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, p.Wait())
	assert.Zero(t, order.breaches.Load(), "an account's transactions overlapped or ran out of order")
	st := p.Stats()
	require.EqualValues(t, accounts*each, st.Completed)
	mean := float64(accounts*each) / workers
	var handled []int64
	for _, w := range st.PerWorker {
		handled = append(handled, w.Handled)
	}
	fmt.Fprintf(testOutput{t}, "jobs per worker: %v (mean %.0f)\n", handled, mean)
	if runtime.GOMAXPROCS(0) > runtime.NumCPU() {
		// With more processors than CPUs, the OS decides which workers
		// run, and a worker that does not run takes no job: the balance
		// is the scheduler's, not the pool's.
		t.Logf("GOMAXPROCS %d > %d CPUs: the balance is not checked", runtime.GOMAXPROCS(0), runtime.NumCPU())
		return
	}
	assert.LessOrEqual(t, float64(slices.Max(handled)), 2*mean, "per worker: %v", handled)
	ran := 0
	for _, n := range handled {
		if n > 0 {
			ran++
		}
	}
	assert.GreaterOrEqual(t, ran, workers-2, "workers that ran jobs: %v", handled)
}

// spin keeps the processor busy for about d, as a job that computes does.
func spin(d time.Duration) {
	for start := time.Now(); time.Since(start) < d; {
	}
}

// testOutput writes to the test's log.
type testOutput struct{ t *testing.T }

func (o testOutput) Write(b []byte) (int, error) {
	o.t.Log(string(b))
	return len(b), nil
}
