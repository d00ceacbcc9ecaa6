package crew_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// Credit for quiet shares (WithFairWindow), in synctest bubbles: a job
// that sleeps d runs for exactly d, so run times and credit are exact.

// quietRequest submits n jobs of length d, each logging its start as name, to
// a new batch of p made with opts, from the calling goroutine, then waits
// for them, and returns how long it took from its first Submit.
func quietRequest(t *testing.T, p *crew.Pool[crew.Job], log *startLog, name string, n int, d time.Duration, opts ...crew.Option) time.Duration {
	start := time.Now()
	b, bctx := p.NewBatch(context.Background(), opts...)
	for range n {
		assert.NoError(t, b.Submit(bctx, func(context.Context) error {
			log.add(name)
			time.Sleep(d)
			return nil
		}))
	}
	assert.NoError(t, b.Wait())
	return time.Since(start)
}

// fairGroup makes a group of n workers WithFairShare and opts, with
// WithFairWindow(window), or the default window if window is negative.
func fairGroup(n int, window time.Duration, opts ...crew.Option) *crew.Pool[crew.Job] {
	opts = append(opts, crew.WithFairShare())
	if window >= 0 {
		opts = append(opts, crew.WithFairWindow(window))
	}
	return crew.NewGroup(n, opts...)
}

// A quiet tenant's request beside a tenant with a deep backlog: with the
// default window, its jobs take every worker freed after it came, so it
// ends about as soon as alone; with none, it gets half of them.
func TestAQuietTenantsRequestOvertakesABackloggedOne(t *testing.T) {
	for _, window := range []time.Duration{-1, 0} {
		name := map[bool]string{true: "the default window: it goes first", false: "no window: it alternates with the backlog"}[window < 0]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := fairGroup(4, window, crew.WithQueueSize(1000)) // the pool holds the whole backlog
				var log startLog
				noisy := startFeed(p, "noisy", 2000, time.Millisecond, &log, crew.WithTenant("noisy"))
				time.Sleep(50*time.Millisecond + time.Microsecond) // the noisy tenant's backlog builds; jobs end on the millisecond
				mark := log.len()
				took := quietRequest(t, p, &log, "quiet", 16, time.Millisecond, crew.WithTenant("quiet"))
				starts := log.since(mark)
				quiet := 0
				for _, s := range starts[:16] {
					if s == "quiet" {
						quiet++
					}
				}
				if window < 0 {
					// Alone on 4 workers, 16 jobs of 1 ms take 4 ms; the
					// quiet request waits for the first worker to free, under 1 ms.
					assert.Equal(t, 16, quiet, "of the 16 jobs that started after the quiet request came, %d were its own: %v", quiet, starts[:16])
					assert.LessOrEqual(t, took, 5*time.Millisecond)
				} else {
					assert.InDelta(t, 8, quiet, 1, "of the 16 jobs that started after the quiet request came, %d were its own", quiet)
					assert.GreaterOrEqual(t, took, 7*time.Millisecond)
				}
				waitFeeds(t, p, noisy)
			})
		})
	}
}

// A share that was idle is credited at most the window per unit of its
// weight: once it used that, the two alternate; with no window, it is
// credited nothing.
func TestAQuietShareIsCreditedAtMostTheWindow(t *testing.T) {
	for _, tc := range []struct {
		window time.Duration
		weight int
	}{{0, 1}, {10 * time.Millisecond, 1}, {10 * time.Millisecond, 2}, {30 * time.Millisecond, 1}} {
		t.Run(fmt.Sprintf("window %v, weight %d", tc.window, tc.weight), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := crew.NewGroup(2, crew.WithFairShare(), crew.WithFairWindow(tc.window), crew.WithQueueSize(2000))
				var log startLog
				busy := startFeed(p, "busy", 2000, time.Millisecond, &log, crew.WithTenant("busy"))
				// The late tenant's first batch has no job while the busy one runs alone.
				idle, _ := p.NewBatch(context.Background(), crew.WithTenant("late"))
				time.Sleep(200*time.Millisecond + time.Microsecond)
				mark := log.len()
				late := startFeed(p, "late", 2000, time.Millisecond, &log, crew.WithTenant("late"), crew.WithWeight(tc.weight))
				time.Sleep(200 * time.Millisecond)
				// Credited c ms of run time, the late tenant runs c jobs of
				// 1 ms first, give or take a turn's jobs (its weight) and
				// one for the two workers that end at the same instant,
				// then the two share by weight.
				credit := int(tc.window/time.Millisecond) * tc.weight
				starts := log.since(mark)
				ahead := 0
				for ahead < len(starts) && starts[ahead] == "late" {
					ahead++
				}
				assert.InDelta(t, credit, ahead, float64(tc.weight+1), "the late tenant ran %d jobs before the busy one's next", ahead)
				rest := starts[ahead:200]
				lateRest := 0
				for _, s := range rest {
					if s == "late" {
						lateRest++
					}
				}
				due := float64(tc.weight) / float64(tc.weight+1)
				assert.InDelta(t, due, float64(lateRest)/float64(len(rest)), 0.05, "after its credit, the late tenant ran %d of %d", lateRest, len(rest))
				require.NoError(t, idle.Wait())
				waitFeeds(t, p, busy, late)
			})
		})
	}
}

// The credit of new shares together is bounded: a backlogged tenant of
// weight 20 beside 20 bursty clients of weight 1, each of which comes back
// as a new tenant after a quiet spell, keeps at least 0.9 of its weighted
// half of the run time over a span of 100 windows.
func TestManyBurstyTenantsCannotStarveABackloggedOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			workers = 4
			window  = time.Millisecond
			job     = 100 * time.Microsecond
		)
		p := crew.NewGroup(workers, crew.WithFairShare(), crew.WithFairWindow(window), crew.WithQueueSize(10_000))
		var log startLog
		heavy := startFeed(p, "heavy", 5000, job, &log, crew.WithTenant("heavy"), crew.WithWeight(20))
		stop := make(chan struct{})
		var bursty sync.WaitGroup
		var burstRun atomic.Int64 // the run time of the bursty tenants' jobs, ns
		for i := range 20 {
			bursty.Go(func() {
				for k := 0; ; k++ {
					// Quiet for a moment, then a burst of a window's run
					// time, under a tenant key of its own each time: a new
					// share, which the pool cannot tell from one quiet for
					// long. With no bound on the credit of new shares
					// together, the bursts would run on credit alone,
					// ahead of the heavy tenant.
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond + time.Duration(i)*time.Microsecond):
					}
					b, bctx := p.NewBatch(context.Background(), crew.WithTenant(fmt.Sprint("bursty", i, ".", k)))
					for range int(window / job) {
						assert.NoError(t, b.Submit(bctx, func(context.Context) error {
							time.Sleep(job)
							burstRun.Add(int64(job))
							return nil
						}))
					}
					assert.NoError(t, b.Wait())
				}
			})
		}
		time.Sleep(20 * time.Millisecond) // past the first bursts' start
		// 100 windows of run time: 100 times what a bursty tenant may be
		// credited at once.
		const span = 100 * window / workers
		h0, b0 := heavy.runTime(), time.Duration(burstRun.Load())
		time.Sleep(span)
		h, b := heavy.runTime()-h0, time.Duration(burstRun.Load())-b0
		close(stop)
		bursty.Wait()
		got := float64(h) / float64(h+b)
		assert.GreaterOrEqual(t, got, 0.9*0.5, "the heavy tenant ran %v, the bursty ones %v", h, b)
		t.Logf("the heavy tenant ran %v, the bursty ones %v: %.3f", h, b, got)
		waitFeeds(t, p, heavy)
	})
}

// While the pool is full, a quiet tenant's Submits are let in ahead of a
// backlogged tenant's blocked ones, and beyond the bound by a job per
// worker at most: its request runs on the workers freed next. With no
// window its jobs take turns with the backlogged tenant's. (Before light
// shares were let in beyond the bound, the quiet request's Submits all
// blocked, and the pool held its bound, 6.)
func TestAQuietTenantsBlockedSubmitsAreLetInFirst(t *testing.T) {
	for _, window := range []time.Duration{-1, 0} {
		name := map[bool]string{true: "the default window: let in first", false: "no window: in turn"}[window < 0]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := fairGroup(2, window) // the default bound: 2 workers hold 6 jobs
				var log startLog
				ctx := context.Background()
				noisy, nctx := p.NewBatch(ctx, crew.WithTenant("noisy"))
				var submitters sync.WaitGroup
				for range 4 {
					submitters.Go(func() {
						for range 50 {
							assert.NoError(t, noisy.Submit(nctx, func(context.Context) error {
								log.add("noisy")
								time.Sleep(time.Millisecond)
								return nil
							}))
						}
					})
				}
				time.Sleep(10*time.Millisecond + time.Microsecond)
				synctest.Wait() // the pool is full, and the noisy tenant's 4 Submits block
				require.Equal(t, 4, crew.PoolBlocked(p))
				mark := log.len()
				// The quiet request's 8 Submits, from a goroutine each, so
				// that all of them block at once: two workers that free at
				// the same instant then both let one in.
				quiet, qctx := p.NewBatch(ctx, crew.WithTenant("quiet"))
				var each sync.WaitGroup
				for range 8 {
					each.Go(func() {
						assert.NoError(t, quiet.Submit(qctx, func(context.Context) error {
							log.add("quiet")
							time.Sleep(time.Millisecond)
							return nil
						}))
					})
				}
				// The quiet tenant, light (it holds fewer jobs than the
				// pool has workers), is let in beyond the bound, a job
				// per worker more: two of its Submits return at once, the
				// other six block, ahead of the noisy tenant's.
				synctest.Wait()
				assert.Equal(t, 8, crew.PoolHeld(p), "the bound and a job per worker")
				assert.Equal(t, 10, crew.PoolBlocked(p))
				each.Wait()
				require.NoError(t, quiet.Wait())
				starts := log.since(mark)
				first, last := -1, 0
				for i, s := range starts {
					if s == "quiet" {
						if first < 0 {
							first = i
						}
						last = i
					}
				}
				between := last - first + 1 - 8
				if window < 0 {
					assert.Zero(t, first, "the quiet request's first job started after %d others: %v", first, starts)
					assert.Zero(t, between, "the noisy tenant's jobs started among the quiet request's: %v", starts)
				} else {
					assert.GreaterOrEqual(t, between, 6, "with no window the two take turns: %v", starts)
				}
				submitters.Wait()
				require.NoError(t, noisy.Wait())
				require.NoError(t, p.Wait())
			})
		})
	}
}

// Credit does not let new requests starve an old one: while the pool is
// full and requests, each a batch of its own and so credited as new, keep
// coming from 16 clients, a big request's later Submits still get their
// turns, about one in 17 with the clients', as with no window.
func TestARequestsLaterSubmitsAreNotStarvedByNewRequests(t *testing.T) {
	for _, window := range []time.Duration{-1, 0} {
		t.Run(map[bool]string{true: "the default window", false: "no window"}[window < 0], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := fairGroup(2, window) // the default bound: 2 workers hold 6 jobs
				var log startLog
				var bigStarted atomic.Int64
				stop := make(chan struct{})
				var clients sync.WaitGroup
				for c := range 16 {
					clients.Go(func() {
						for {
							select {
							case <-stop:
								return
							default:
							}
							quietRequest(t, p, &log, "client", 4, time.Millisecond+time.Duration(c)*time.Microsecond)
						}
					})
				}
				time.Sleep(10 * time.Millisecond)
				big, bctx := p.NewBatch(context.Background())
				done := make(chan struct{})
				go func() {
					defer close(done)
					for {
						err := big.Submit(bctx, func(context.Context) error {
							bigStarted.Add(1)
							time.Sleep(time.Millisecond)
							return nil
						})
						if err != nil {
							return // the batch was closed
						}
					}
				}()
				time.Sleep(200 * time.Millisecond) // 400 jobs' run time
				close(stop)
				clients.Wait()
				started := bigStarted.Load()
				assert.NoError(t, big.Wait()) // closes the batch: its blocked Submit returns
				<-done
				require.NoError(t, p.Wait())
				// 400 starts in 200 ms, one in 17 of the turns: about 23.
				assert.GreaterOrEqual(t, started, int64(12), "the big request's jobs started %d times in 200 ms", started)
				t.Logf("the big request's jobs started %d times in 200 ms", started)
			})
		})
	}
}

// A tenant that sends requests back to back is remembered between them,
// and so is not taken for a quiet one: its next request takes its turns
// with a backlogged tenant rather than run ahead of it. The pool forgets
// the tenants that rested longest beyond 1,024.
func TestATenantSendingRequestsBackToBackIsNotCredited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(2, crew.WithFairShare(), crew.WithFairWindow(10*time.Millisecond), crew.WithQueueSize(1000))
		var log startLog
		other := startFeed(p, "other", 400, time.Millisecond, &log, crew.WithTenant("other"))
		time.Sleep(20*time.Millisecond + time.Microsecond)
		var marks []int
		for range 3 {
			marks = append(marks, log.len())
			quietRequest(t, p, &log, "busy", 20, time.Millisecond, crew.WithTenant("busy"))
		}
		assert.Equal(t, 1, crew.PoolRestingTenants(p), "the busy tenant rests between its requests")
		// Its first request is credited 10 ms, and runs 10 jobs in a row
		// ahead of the other tenant; the next ones take turns with it,
		// give or take a tie.
		for i, m := range marks {
			starts := log.since(m)[:24]
			ahead, run := 0, 0
			for _, s := range starts {
				if s == "busy" {
					run++
					ahead = max(ahead, run)
				} else {
					run = 0
				}
			}
			if i == 0 {
				assert.InDelta(t, 11, ahead, 2, "the first request ran %d jobs in a row: %v", ahead, starts)
			} else {
				assert.LessOrEqual(t, ahead, 3, "request %d ran %d jobs in a row: %v", i+1, ahead, starts)
			}
		}
		waitFeeds(t, p, other)
		// The pool remembers the last 1,024 tenants with no batch.
		for i := range 1100 {
			b, _ := p.NewBatch(context.Background(), crew.WithTenant(fmt.Sprint("t", i)))
			require.NoError(t, b.Wait())
		}
		assert.Equal(t, 1024, crew.PoolRestingTenants(p))
		assert.Empty(t, crew.FairLeftovers(p))
	})
}

// A full pool lets a light share (one holding fewer jobs than the pool
// has workers) in beyond its bound, with or without a window: a quiet
// request's first Submit returns at once beside a tenant whose blocked
// Submits fill the pool, and the backlogged tenant, let in within the
// bound only, leaves the quiet request's job its room as its own jobs
// end; the quiet request's next Submit, coming later, finds room at once
// too. (Before, the first Submit waited for a job's end, and with no
// window the noisy tenant filled the pool again before the second.)
func TestAFullPoolLetsALightShareInBeyondItsBound(t *testing.T) {
	for _, window := range []time.Duration{-1, 0} {
		t.Run(map[bool]string{true: "the default window", false: "no window"}[window < 0], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := fairGroup(2, window) // the default bound: 2 workers hold 6 jobs
				noisy, nctx := p.NewBatch(context.Background(), crew.WithTenant("noisy"))
				var submitters sync.WaitGroup
				for range 4 {
					submitters.Go(func() {
						for range 40 {
							assert.NoError(t, noisy.Submit(nctx, func(context.Context) error {
								time.Sleep(time.Millisecond)
								return nil
							}))
						}
					})
				}
				time.Sleep(10*time.Millisecond + time.Microsecond)
				require.Equal(t, 6, crew.PoolHeld(p), "the noisy tenant fills the pool")
				quiet, qctx := p.NewBatch(context.Background(), crew.WithTenant("quiet"))
				long := func(context.Context) error { time.Sleep(20 * time.Millisecond); return nil }
				start := time.Now()
				require.NoError(t, quiet.Submit(qctx, long))
				assert.Zero(t, time.Since(start), "the quiet request's first Submit waited")
				assert.Equal(t, 7, crew.PoolHeld(p), "the bound and the quiet request's job")
				// Five of the noisy tenant's jobs end meanwhile. The half
				// millisecond keeps this goroutine's wake off the instants
				// jobs end, whose goroutines would wake with it and run in
				// any order.
				time.Sleep(5*time.Millisecond + 500*time.Microsecond)
				assert.Equal(t, 6, crew.PoolHeld(p), "the noisy tenant let in within the bound only")
				start = time.Now()
				require.NoError(t, quiet.Submit(qctx, long))
				assert.Zero(t, time.Since(start), "the quiet request's second Submit waited")
				require.NoError(t, quiet.Wait())
				submitters.Wait()
				require.NoError(t, noisy.Wait())
				require.NoError(t, p.Wait())
				assert.Empty(t, crew.FairLeftovers(p))
			})
		})
	}
}

// A share holds credit only while it has jobs: a pool whose own job left
// it credited keeps no room for it once the job ended, and takes its
// whole bound at once.
func TestAShareWithNoJobHoldsNoCredit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(2, crew.WithFairShare(), crew.WithQueueSize(1)) // a bound of 4 jobs
		ctx := context.Background()
		b, bctx := p.NewBatch(ctx)
		for range 20 {
			require.NoError(t, b.Submit(bctx, func(context.Context) error { time.Sleep(time.Millisecond); return nil }))
		}
		require.NoError(t, b.Wait())
		// The pool's own share, new, is owed credit for the pool's run so far.
		require.NoError(t, p.Submit(ctx, func(context.Context) error { time.Sleep(10 * time.Microsecond); return nil }))
		time.Sleep(time.Millisecond)
		gate := make(chan struct{})
		accepted := 0
		for range 4 {
			if p.TrySubmit(func(context.Context) error { <-gate; return nil }) {
				accepted++
			}
		}
		assert.Equal(t, 4, accepted, "an idle pool of bound 4 takes 4 jobs")
		close(gate)
		require.NoError(t, p.Wait())
		assert.Empty(t, crew.FairLeftovers(p))
	})
}

// The room beside the bound is bounded: with a tenant whose Submits keep
// the pool full and 100 tenants, each sending requests from a goroutine of
// its own, a fair pool never holds more than its bound and a job per
// worker, and it does use that room. Every job lasts a multiple of 100 µs,
// so that the pool changes only on those instants, where the test looks.
func TestAFairPoolHoldsAtMostItsBoundAndAJobPerWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			workers = 4
			bound   = workers * (1 + crew.DefaultQueueSize)
			step    = 100 * time.Microsecond
		)
		p := fairGroup(workers, -1)
		var log startLog
		noisy := startFeed(p, "noisy", 4000, 10*step, &log, crew.WithTenant("noisy"))
		var tenants sync.WaitGroup
		var ran atomic.Int64
		for i := range 100 {
			tenants.Go(func() {
				for r := range 3 {
					time.Sleep(step * time.Duration(1+(i+r)%7))
					b, bctx := p.NewBatch(context.Background(), crew.WithTenant(fmt.Sprint("tenant", i)))
					for j := range 2 + (i+r)%9 {
						assert.NoError(t, b.Submit(bctx, func(context.Context) error {
							time.Sleep(step * time.Duration(1+j%3))
							ran.Add(1)
							return nil
						}))
					}
					assert.NoError(t, b.Wait())
				}
			})
		}
		done := make(chan struct{})
		go func() { tenants.Wait(); close(done) }()
		highest := 0
		for finished := false; !finished; {
			time.Sleep(step)
			synctest.Wait()
			held := crew.PoolHeld(p)
			require.LessOrEqual(t, held, bound+workers, "the pool holds %d jobs at %v", held, time.Now())
			highest = max(highest, held)
			select {
			case <-done:
				finished = true
			default:
			}
		}
		assert.Greater(t, highest, bound, "the light tenants were let in beyond the bound")
		t.Logf("the pool held %d jobs at most; the small tenants ran %d jobs", highest, ran.Load())
		waitFeeds(t, p, noisy)
	})
}
