package crew_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// Fair shares (WithFairShare). The tests run in synctest bubbles, where a
// job that sleeps for d runs for exactly d of the bubble's clock: run
// times, and so a fair pool's order, are the same on every run. The
// sleeps give jobs their cost; nothing is ordered by them. Most tests let
// the pool hold every job, so that they test the order of dispatch alone:
// which share's Submit gets the room a job frees depends on which
// submitters are blocked at that instant, and so on the scheduler.

// A feed is a batch kept backlogged by a goroutine of its own that submits
// n jobs of cost d each, in order, logging each job's start.
type feed struct {
	b       *crew.Batch[crew.Job]
	name    string
	started atomic.Int64
	done    chan error // the feeder's Submit errors, then the batch's Wait
}

func startFeed(p *crew.Pool[crew.Job], name string, n int, d time.Duration, log *startLog, opts ...crew.Option) *feed {
	f := &feed{name: name, done: make(chan error, 1)}
	ctx := context.Background()
	var bctx context.Context
	f.b, bctx = p.NewBatch(ctx, opts...)
	go func() {
		for range n {
			if err := f.b.Submit(bctx, func(context.Context) error {
				f.started.Add(1)
				log.add(name)
				time.Sleep(d)
				return nil
			}); err != nil {
				f.done <- err
				return
			}
		}
		f.done <- f.b.Wait()
	}()
	return f
}

// runTime is the run time of the feed's jobs that ended.
func (f *feed) runTime() time.Duration { return f.b.Stats().RunTime }

// A startLog records whose job started, in order.
type startLog struct {
	mu  sync.Mutex
	log []string
}

func (l *startLog) add(name string) {
	l.mu.Lock()
	l.log = append(l.log, name)
	l.mu.Unlock()
}

func (l *startLog) since(i int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.log[i:]...)
}

// before reports how many jobs started after the first mark ones and
// before name's first job.
func (l *startLog) before(mark int, name string) int {
	after := l.since(mark)
	at := 0
	for at < len(after) && after[at] != name {
		at++
	}
	return at
}

func (l *startLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.log)
}

func waitFeeds(t *testing.T, p *crew.Pool[crew.Job], feeds ...*feed) {
	t.Helper()
	for _, f := range feeds {
		require.NoError(t, <-f.done, f.name)
	}
	require.NoError(t, p.Wait())
}

// share reports a's part of a's and b's run times.
func share(a, b time.Duration) float64 { return float64(a) / float64(a+b) }

func TestAFairPoolGivesSharesRunTimeInProportionToTheirWeights(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(4, crew.WithFairShare(), crew.WithQueueSize(1000)) // the pool holds every job: no Submit blocks
		var log startLog
		light := startFeed(p, "light", 2000, time.Millisecond, &log, crew.WithTenant("light"), crew.WithWeight(1))
		heavy := startFeed(p, "heavy", 2000, time.Millisecond, &log, crew.WithTenant("heavy"), crew.WithWeight(3))
		time.Sleep(400 * time.Millisecond) // 1.6 s of worker time; both stay backlogged
		l, h := light.runTime(), heavy.runTime()
		assert.InDelta(t, 0.25, share(l, h), 0.05, "light %v, heavy %v", l, h)
		waitFeeds(t, p, light, heavy)
	})
}

func TestAFairPoolSharesByRunTimeNotByCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(2, crew.WithFairShare(), crew.WithQueueSize(2000))
		var log startLog
		quick := startFeed(p, "quick", 2000, time.Millisecond, &log)
		slow := startFeed(p, "slow", 500, 4*time.Millisecond, &log)
		time.Sleep(400 * time.Millisecond)
		q, s := quick.runTime(), slow.runTime()
		assert.InDelta(t, 0.5, share(q, s), 0.05, "quick %v, slow %v", q, s)
		qn, sn := quick.started.Load(), slow.started.Load()
		assert.InDelta(t, 4.0, float64(qn)/float64(sn), 0.5, "the quick share ran %d jobs, the slow %d", qn, sn)
		waitFeeds(t, p, quick, slow)
	})
}

func TestASmallBatchOvertakesABigOneThatFillsAFairPool(t *testing.T) {
	for _, fair := range []bool{true, false} {
		name := map[bool]string{true: "fair: the small batch's job starts next", false: "first come first served: it waits behind the big batch"}[fair]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := []crew.Option{crew.WithQueueSize(2)} // a bound of 6 jobs
				if fair {
					opts = append(opts, crew.WithFairShare())
				}
				p := crew.NewGroup(2, opts...)
				var log startLog
				big := startFeed(p, "big", 100, time.Millisecond, &log)
				time.Sleep(10*time.Millisecond + time.Microsecond) // the big batch fills the pool, and its Submit blocks
				synctest.Wait()
				require.Equal(t, 1, crew.PoolBlocked(p))
				mark := log.len()
				small := startFeed(p, "small", 1, time.Millisecond, &log)
				waitFeeds(t, p, big, small)
				at := log.before(mark, "small")
				if fair {
					assert.LessOrEqual(t, at, 2, "the small batch's job waited behind %d of the big one's", at)
				} else {
					assert.Greater(t, at, 2, "a first-come-first-served pool runs the big batch's jobs first")
				}
			})
		})
	}
}

func TestATenantsBatchesShareOnePartOfAFairPool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(4, crew.WithFairShare(), crew.WithQueueSize(1000))
		var log startLog
		var many []*feed
		for range 4 {
			many = append(many, startFeed(p, "many", 500, time.Millisecond, &log, crew.WithTenant("many")))
		}
		one := startFeed(p, "one", 2000, time.Millisecond, &log, crew.WithTenant("one"))
		assert.Equal(t, 2, crew.PoolTenants(p))
		time.Sleep(200 * time.Millisecond)
		var m time.Duration
		for _, f := range many {
			m += f.runTime()
		}
		o := one.runTime()
		assert.InDelta(t, 0.5, share(m, o), 0.05, "the tenant of 4 batches ran %v, the tenant of one %v", m, o)
		waitFeeds(t, p, append(many, one)...)
		assert.Zero(t, crew.PoolTenants(p), "a tenant is forgotten with its last batch")
	})
}

func TestABatchKeepsItsLimitAndItsFirstErrorInAFairPool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(4, crew.WithFairShare(), crew.WithQueueSize(100)) // no Submit blocks
		ctx := context.Background()
		limited, lctx := p.NewBatch(ctx, crew.WithLimit(2))
		var running, most atomic.Int64
		for range 20 {
			require.NoError(t, limited.Submit(lctx, func(context.Context) error {
				n := running.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(time.Millisecond)
				running.Add(-1)
				return nil
			}))
		}
		boom := errors.New("boom")
		failing, fctx := p.NewBatch(ctx, crew.WithLimit(1))
		var ran atomic.Int64
		for i := range 10 {
			require.NoError(t, failing.Submit(fctx, func(context.Context) error {
				ran.Add(1)
				time.Sleep(time.Millisecond)
				if i == 2 {
					return boom
				}
				return nil
			}))
		}
		require.NoError(t, limited.Wait())
		assert.ErrorIs(t, failing.Wait(), boom)
		assert.Equal(t, int64(2), most.Load(), "WithLimit(2) ran %d jobs at once", most.Load())
		s := failing.Stats()
		assert.Equal(t, int64(3), ran.Load(), "the jobs submitted after the failing one are skipped")
		assert.Equal(t, int64(7), s.Canceled)
		assert.Equal(t, int64(3), s.Completed)
		require.NoError(t, p.Wait())
	})
}

func TestASharesJobsRunInSubmissionOrderAcrossItsBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(1, crew.WithFairShare(), crew.WithQueueSize(100))
		ctx := context.Background()
		release := make(chan struct{})
		hold, hctx := p.NewBatch(ctx, crew.WithTenant("other"))
		require.NoError(t, hold.Submit(hctx, func(context.Context) error { <-release; return nil }))
		a, actx := p.NewBatch(ctx, crew.WithTenant("t"))
		b, bctx0 := p.NewBatch(ctx, crew.WithTenant("t"))
		var mu sync.Mutex
		var got []int
		job := func(i int) crew.Job {
			return func(context.Context) error { mu.Lock(); got = append(got, i); mu.Unlock(); return nil }
		}
		for i := range 20 {
			batch, bctx := a, actx
			if i%3 == 0 {
				batch, bctx = b, bctx0
			}
			require.NoError(t, batch.Submit(bctx, job(i)))
		}
		close(release)
		require.NoError(t, a.Wait())
		require.NoError(t, b.Wait())
		require.NoError(t, hold.Wait())
		require.NoError(t, p.Wait())
		want := make([]int, 20)
		for i := range want {
			want[i] = i
		}
		assert.Equal(t, want, got)
	})
}

func TestAFairPoolsOwnJobsAreAShareToo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(2, crew.WithFairShare(), crew.WithQueueSize(2000))
		var log startLog
		batch := startFeed(p, "batch", 2000, time.Millisecond, &log)
		var own atomic.Int64
		go func() {
			for range 2000 {
				_ = p.Submit(context.Background(), func(context.Context) error {
					own.Add(1)
					time.Sleep(time.Millisecond)
					return nil
				})
			}
		}()
		time.Sleep(200 * time.Millisecond)
		o, b := own.Load(), batch.started.Load()
		assert.InDelta(t, 0.5, float64(o)/float64(o+b), 0.05, "the pool's own jobs started %d, the batch's %d", o, b)
		require.NoError(t, <-batch.done)
		require.NoError(t, p.Wait())
	})
}

func TestFairShareMisusePanics(t *testing.T) {
	ctx := context.Background()
	fifo := crew.NewGroup(1)
	defer fifo.Wait()
	for name, f := range map[string]func(){
		"WithWeight(0)": func() { crew.WithWeight(0) },
		"WithFairShare with WithKey": func() {
			crew.NewPool(1, nop[int], crew.WithFairShare(), crew.WithKey(func(v int) int { return v }))
		},
		"WithFairShare with WithConsistentHash": func() {
			crew.NewPool(1, nop[int], crew.WithFairShare(), crew.WithConsistentHash(func(v int) int { return v }))
		},
		"WithFairShare with WithMailbox": func() {
			crew.NewGroup(1, crew.WithFairShare(), crew.WithMailbox(func() crew.Mailbox[crew.Job] { return crew.NewUnbounded[crew.Job]() }))
		},
		"WithFairShare to NewBatch": func() { fifo.NewBatch(ctx, crew.WithFairShare()) },
		"WithFairShare to Map": func() {
			_, _ = crew.Map(ctx, 1, []int{1}, func(context.Context, int) (int, error) { return 0, nil }, crew.WithFairShare())
		},
		"WithTenant to NewGroup":               func() { crew.NewGroup(1, crew.WithTenant("t")) },
		"WithFairWindow(-1)":                   func() { crew.WithFairWindow(-1) },
		"WithFairWindow without WithFairShare": func() { crew.NewGroup(1, crew.WithFairWindow(time.Millisecond)) },
		"WithFairWindow to NewBatch":           func() { fifo.NewBatch(ctx, crew.WithFairWindow(time.Millisecond)) },
		"WithFairWindow to Map": func() {
			_, _ = crew.Map(ctx, 1, []int{1}, func(context.Context, int) (int, error) { return 0, nil }, crew.WithFairWindow(0))
		},
		"WithWeight to Spawn": func() { crew.Spawn(ctx, nop[int], crew.WithWeight(2)) },
	} {
		t.Run(name, func(t *testing.T) {
			assert.True(t, strings.HasPrefix(panicOf(f), "crew: "), "panicked with %q", panicOf(f))
		})
	}
}

// panicOf returns what f panics with, as a string.
func panicOf(f func()) (msg string) {
	defer func() { msg, _ = recover().(string) }()
	f()
	return ""
}

func TestAFairPoolDoesNotAllocatePerJob(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	// Two workers and a small bound: two batches of two tenants, whose
	// Submits block for most jobs and are admitted by share.
	p := crew.NewPool(2, func(context.Context, int) error { return nil }, crew.WithQueueSize(1), crew.WithFairShare())
	ctx := context.Background()
	a, actx := p.NewBatch(ctx, crew.WithTenant("a"))
	b, bctx := p.NewBatch(ctx, crew.WithTenant("b"), crew.WithWeight(2))
	const jobs = 20_000
	allocs := testing.AllocsPerRun(1, func() {
		done := make(chan struct{})
		go func() {
			defer close(done)
			for v := range jobs {
				_ = b.Submit(bctx, v)
			}
		}()
		for v := range jobs {
			_ = a.Submit(actx, v)
		}
		<-done
	})
	require.NoError(t, a.Wait())
	require.NoError(t, b.Wait())
	require.NoError(t, p.Wait())
	assert.Less(t, allocs/(2*jobs), 0.001, "%v allocations for %d jobs", allocs, 2*jobs)
}

// A pool times every job of a share whose jobs are slow, and one in 16 of
// a quick share's, charging the others their share's mean: a share whose
// quick jobs turn slow is caught by its next timed job.
func TestAShareWhoseQuickJobsTurnSlowIsChargedTheirTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(2, crew.WithFairShare(), crew.WithQueueSize(2000))
		ctx := context.Background()
		shifty, sctx := p.NewBatch(ctx)
		var slowStarts atomic.Int64
		for i := range 1200 {
			d := time.Microsecond // charged their mean, but for one in 16
			if i >= 200 {
				d = 10 * time.Millisecond
			}
			require.NoError(t, shifty.Submit(sctx, func(context.Context) error {
				if d > time.Microsecond {
					slowStarts.Add(1)
				}
				time.Sleep(d)
				return nil
			}))
		}
		var log startLog
		steady := startFeed(p, "steady", 1000, 10*time.Millisecond, &log)
		time.Sleep(time.Second)
		s, st := slowStarts.Load(), steady.started.Load()
		assert.InDelta(t, 0.5, float64(s)/float64(s+st), 0.05, "the share whose jobs turned slow started %d slow jobs, the steady one %d", s, st)
		require.NoError(t, shifty.Wait())
		waitFeeds(t, p, steady)
	})
}

// A big batch whose Submits block from many goroutines at once holds the
// admission of a first-come-first-served pool; a fair pool admits the
// blocked shares in turn.
func TestABigBatchsBlockedSubmitsDoNotHoldASmallOneOutOfAFairPool(t *testing.T) {
	for _, fair := range []bool{true, false} {
		name := map[bool]string{true: "fair: the small batch is admitted in its turn", false: "first come first served: it is admitted behind every blocked Submit"}[fair]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts := []crew.Option{crew.WithQueueSize(2)} // a bound of 6 jobs
				if fair {
					opts = append(opts, crew.WithFairShare())
				}
				p := crew.NewGroup(2, opts...)
				var log startLog
				ctx := context.Background()
				big, bctx := p.NewBatch(ctx)
				var submitters sync.WaitGroup
				for range 8 {
					submitters.Go(func() {
						for range 10 {
							assert.NoError(t, big.Submit(bctx, func(context.Context) error {
								log.add("big")
								time.Sleep(time.Millisecond)
								return nil
							}))
						}
					})
				}
				synctest.Wait() // the pool is full, and 8 Submits of the big batch block
				require.Equal(t, 8, crew.PoolBlocked(p))
				mark := log.len()
				small := startFeed(p, "small", 1, time.Millisecond, &log)
				submitters.Wait()
				require.NoError(t, big.Wait())
				waitFeeds(t, p, small)
				at := log.before(mark, "small")
				if fair {
					assert.LessOrEqual(t, at, 3, "the small batch's job waited behind %d of the big one's", at)
				} else {
					assert.Greater(t, at, 8, "a first-come-first-served pool admits the big batch's blocked Submits first")
				}
			})
		})
	}
}

func TestAFairPoolChargesItsSharesForTheJobsThatRanOnly(t *testing.T) {
	t.Run("jobs skipped after a batch's first error cost it nothing", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := crew.NewGroup(1, crew.WithFairShare(), crew.WithQueueSize(1000))
			b, bctx := p.NewBatch(context.Background())
			var ran atomic.Int64
			for i := range 200 {
				require.NoError(t, b.Submit(bctx, func(context.Context) error {
					ran.Add(1)
					time.Sleep(time.Microsecond) // quick: charged its mean, but for one in 16
					if i == 9 {
						return errors.New("boom")
					}
					return nil
				}))
			}
			require.Error(t, b.Wait())
			s := b.Stats()
			require.Equal(t, int64(190), s.Canceled)
			assert.Equal(t, time.Duration(ran.Load())*time.Microsecond, s.RunTime)
			require.NoError(t, p.Wait())
		})
	})
	t.Run("a job that ran, then called runtime.Goexit, is charged its run time", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			p := crew.NewGroup(2, crew.WithFairShare())
			b, bctx := p.NewBatch(context.Background())
			require.NoError(t, b.Submit(bctx, func(context.Context) error {
				time.Sleep(time.Millisecond)
				runtime.Goexit()
				return nil
			}))
			require.Error(t, b.Wait())
			assert.Equal(t, time.Millisecond, b.Stats().RunTime)
			require.NoError(t, p.Wait())
		})
	})
}

// A tenant's latest batch sets its weight, also while one of its jobs
// runs: that job's charge is settled at the new weight, all of it.
func TestATenantsWeightChangedWhileItsJobRunsLeavesItsVirtualTimeWhole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := crew.NewGroup(1, crew.WithFairShare())
		ctx := context.Background()
		b1, c1 := p.NewBatch(ctx, crew.WithTenant("t"), crew.WithWeight(10))
		require.NoError(t, b1.Submit(c1, func(context.Context) error { time.Sleep(time.Millisecond); return nil }))
		synctest.Wait()
		time.Sleep(2 * time.Millisecond) // the first job ended: the tenant's mean is 1 ms
		before := crew.ShareVT(b1)
		release := make(chan struct{})
		require.NoError(t, b1.Submit(c1, func(context.Context) error { <-release; return nil })) // runs no time
		synctest.Wait()
		b2, _ := p.NewBatch(ctx, crew.WithTenant("t")) // weight 1 from now on
		close(release)
		require.NoError(t, b1.Wait())
		assert.InDelta(t, before, crew.ShareVT(b1), 1, "a job that ran no time cost its share nothing")
		require.NoError(t, b2.Wait())
		require.NoError(t, p.Wait())
	})
}
