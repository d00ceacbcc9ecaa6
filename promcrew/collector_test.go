package promcrew_test

import (
	"context"
	"errors"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
	"github.com/crewlib/crew/promcrew"
)

// The pool's gauges, in the order of crew.Gauges.
var poolGauges = []string{"crew_pool_queued_jobs", "crew_pool_running_jobs", "crew_pool_workers", "crew_pool_blocked_submits"}

// gaugesOf returns the pool gauges of pool name in f: -1 for a missing one.
func gaugesOf(f families, name string) [4]float64 {
	var g [4]float64
	for i, n := range poolGauges {
		g[i] = f.value(n, "pool", name)
	}
	return g
}

var noGauges = [4]float64{-1, -1, -1, -1}

func TestAScrapeCountsEveryJobOfAPoolExactly(t *testing.T) {
	c, reg := registered(t)
	srv := httptest.NewServer(handler(reg))
	defer srv.Close()

	boom := errors.New("boom")
	p := crew.NewPool(3, func(_ context.Context, v int) error {
		switch v % 4 {
		case 1:
			return boom
		case 2:
			panic("kaboom")
		}
		return nil
	}, crew.WithName("resize"), crew.WithMetrics(c))
	const jobs = 40
	for v := range jobs {
		require.NoError(t, p.Submit(context.Background(), v))
	}
	require.Error(t, p.Wait(), "the first error or panic")

	f := scrapeServer(t, srv)
	for name, want := range map[string]float64{
		"crew_pool_jobs_submitted_total": jobs,
		"crew_pool_jobs_completed_total": jobs,
		"crew_pool_jobs_failed_total":    jobs / 2, // errors and panics
		"crew_pool_jobs_panicked_total":  jobs / 4,
		"crew_pool_jobs_skipped_total":   0,
		"crew_pool_jobs_dropped_total":   0,
	} {
		assert.Equal(t, want, f.value(name, "pool", "resize"), name)
	}
	assert.Equal(t, jobs, f.count("crew_pool_queue_wait_seconds", "pool", "resize"), "a queue wait per job")
	assert.Equal(t, jobs, f.count("crew_pool_run_seconds", "pool", "resize"), "a run time per job")
	assert.Equal(t, noGauges, gaugesOf(f, "resize"), "an ended pool's gauges are gone")
	assert.Nil(t, f["crew_pool_tenant_run_seconds_total"], "no batch with a tenant")
	srv.Client().CloseIdleConnections()
}

func TestAScrapeShowsAPoolsHeldJobsAndBlockedSubmits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, reg := registered(t)
		p := crew.NewGroup(2, crew.WithQueueSize(1), crew.WithName("held"), crew.WithMetrics(c)) // a bound of 4 jobs
		ctx := context.Background()
		release := make(chan struct{})
		hold := func(context.Context) error { <-release; return nil }
		synctest.Wait()
		assert.Equal(t, [4]float64{0, 0, 2, 0}, gaugesOf(scrape(t, reg), "held"), "an idle pool's workers")

		for range 4 {
			require.NoError(t, p.Submit(ctx, hold))
		}
		blocked := make(chan error)
		go func() { blocked <- p.Submit(ctx, hold) }()
		synctest.Wait() // two run, two wait, one Submit is blocked
		f := scrape(t, reg)
		assert.Equal(t, [4]float64{2, 2, 2, 1}, gaugesOf(f, "held"), "queued, running, workers, blocked")
		assert.Equal(t, 4.0, f.value("crew_pool_jobs_submitted_total", "pool", "held"), "a blocked Submit is not accepted yet")
		assert.Equal(t, 2, f.count("crew_pool_queue_wait_seconds", "pool", "held"), "the running jobs' waits")

		close(release)
		require.NoError(t, <-blocked)
		require.NoError(t, p.Wait())
		f = scrape(t, reg)
		assert.Equal(t, noGauges, gaugesOf(f, "held"), "gone after Wait")
		assert.Equal(t, 5.0, f.value("crew_pool_jobs_submitted_total", "pool", "held"), "the counts stay")
		assert.Equal(t, 5.0, f.value("crew_pool_jobs_completed_total", "pool", "held"))
		assert.Equal(t, 5, f.count("crew_pool_queue_wait_seconds", "pool", "held"))
		assert.Equal(t, 5, f.count("crew_pool_run_seconds", "pool", "held"))
	})
}

func TestPoolsThatShareANameAddUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, reg := registered(t)
		ctx := context.Background()
		one := crew.NewGroup(2, crew.WithName("shared"), crew.WithMetrics(c))
		two := crew.NewGroup(3, crew.WithName("shared"), crew.WithMetrics(c))
		other := crew.NewGroup(1, crew.WithName("other"), crew.WithMetrics(c))
		releaseOne, releaseTwo := make(chan struct{}), make(chan struct{})
		require.NoError(t, one.Submit(ctx, func(context.Context) error { <-releaseOne; return nil }))
		require.NoError(t, two.Submit(ctx, func(context.Context) error { <-releaseTwo; return nil }))
		require.NoError(t, two.Submit(ctx, func(context.Context) error { return nil }))
		synctest.Wait()
		f := scrape(t, reg)
		assert.Equal(t, [4]float64{0, 2, 5, 0}, gaugesOf(f, "shared"), "one running job each, 2 + 3 workers")
		assert.Equal(t, 3.0, f.value("crew_pool_jobs_submitted_total", "pool", "shared"))
		assert.Equal(t, [4]float64{0, 0, 1, 0}, gaugesOf(f, "other"), "another name, another series")

		close(releaseOne)
		require.NoError(t, one.Wait())
		f = scrape(t, reg)
		assert.Equal(t, [4]float64{0, 1, 3, 0}, gaugesOf(f, "shared"), "the live pool's gauges alone")
		assert.Equal(t, 2.0, f.value("crew_pool_jobs_completed_total", "pool", "shared"), "the ended pool's count stays")

		close(releaseTwo)
		require.NoError(t, two.Wait())
		require.NoError(t, other.Wait())
		f = scrape(t, reg)
		assert.Equal(t, noGauges, gaugesOf(f, "shared"))
		assert.Equal(t, 3.0, f.value("crew_pool_jobs_completed_total", "pool", "shared"))
		assert.Equal(t, 3, f.count("crew_pool_run_seconds", "pool", "shared"))
		assert.Equal(t, 0.0, f.value("crew_pool_jobs_completed_total", "pool", "other"), "a pool without jobs has its counters at 0")
	})
}

// In a bubble, a job that sleeps d runs exactly d.
func TestAFairPoolsTenantsRunTimeIsCountedPerTenant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, reg := registered(t)
		p := crew.NewGroup(2, crew.WithFairShare(), crew.WithName("fair"), crew.WithMetrics(c))
		ctx := context.Background()
		sleep := func(d time.Duration) crew.Job {
			return func(context.Context) error { time.Sleep(d); return nil }
		}
		for _, tenant := range []string{"a", "b", "a"} {
			b, bctx := p.NewBatch(ctx, crew.WithTenant(tenant))
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

		f := scrape(t, reg)
		const tenantRun = "crew_pool_tenant_run_seconds_total"
		assert.InDelta(t, 0.006, f.value(tenantRun, "pool", "fair", "tenant", "a"), 1e-12)
		assert.InDelta(t, 0.003, f.value(tenantRun, "pool", "fair", "tenant", "b"), 1e-12)
		assert.Len(t, f[tenantRun].GetMetric(), 2, "no series for the jobs without a tenant")
		run := f.series("crew_pool_run_seconds", "pool", "fair").GetHistogram()
		assert.Equal(t, uint64(11), run.GetSampleCount())
		assert.InDelta(t, 0.012, run.GetSampleSum(), 1e-12, "the run time of every job, with a tenant or not")
	})
}

func TestAScrapeCountsAnActorsMessagesAndDeadLetters(t *testing.T) {
	c, reg := registered(t)
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
	}, crew.WithName("mailer"), crew.WithMetrics(c), crew.WithErrorHandler(func(error) {}),
		crew.WithDeadLetters(func(crew.DeadLetter) {}))
	for v := range 5 {
		require.NoError(t, actor.Tell(ctx, v))
	}
	<-started
	f := scrape(t, reg)
	assert.Equal(t, 4.0, f.value("crew_actor_mailbox_depth", "actor", "mailer"))
	assert.Equal(t, 1.0, f.value("crew_actor_busy", "actor", "mailer"))
	assert.Equal(t, 1.0, f.value("crew_actor_live", "actor", "mailer"))
	assert.Equal(t, 5.0, f.value("crew_actor_messages_told_total", "actor", "mailer"))

	close(release)
	actor.Drain()
	<-actor.Done()
	require.ErrorIs(t, actor.Tell(ctx, 9), crew.ErrStopped)
	f = scrape(t, reg)
	for name, want := range map[string]float64{
		"crew_actor_messages_told_total":     5,
		"crew_actor_messages_handled_total":  5,
		"crew_actor_messages_failed_total":   2,
		"crew_actor_messages_panicked_total": 1,
		"crew_actor_dead_letters_total":      1, // the Tell refused after the end
		"crew_actor_mailbox_depth":           -1,
		"crew_actor_busy":                    -1,
		"crew_actor_live":                    -1,
	} {
		assert.Equal(t, want, f.value(name, "actor", "mailer"), name)
	}
	assert.Nil(t, f["crew_pool_jobs_submitted_total"], "no pool")
}

func TestAScrapeShowsARouterUnderItsOwnName(t *testing.T) {
	c, reg := registered(t)
	ctx := context.Background()
	router := crew.SpawnRouter(ctx, 3, func(context.Context, int) error { return nil },
		crew.WithName("fleet"), crew.WithMetrics(c), crew.WithStrategy(crew.RoundRobin()))
	f := scrape(t, reg)
	assert.Equal(t, 3.0, f.value("crew_actor_live", "actor", "fleet"), "its routees together")
	assert.Len(t, f["crew_actor_live"].GetMetric(), 1, "one series for the router, none per routee")

	for v := range 30 {
		require.NoError(t, router.Tell(ctx, v))
	}
	require.NoError(t, router.Broadcast(ctx, -1))
	router.Drain()
	<-router.Done()
	f = scrape(t, reg)
	assert.Equal(t, 33.0, f.value("crew_actor_messages_told_total", "actor", "fleet"))
	assert.Equal(t, 33.0, f.value("crew_actor_messages_handled_total", "actor", "fleet"))
	assert.Equal(t, 0.0, f.value("crew_actor_dead_letters_total", "actor", "fleet"))
	assert.Equal(t, -1.0, f.value("crew_actor_live", "actor", "fleet"), "gone once every routee has exited")
}

// everyFamily returns a registered Collector with a series in every
// family: a live fair pool with a tenant's failed job, and a live actor
// with a message handled; end ends them.
func everyFamily(t *testing.T) (c *promcrew.Collector, reg *prometheus.Registry, end func()) {
	t.Helper()
	c, reg = registered(t)
	ctx := context.Background()
	p := crew.NewGroup(2, crew.WithFairShare(), crew.WithName("every"), crew.WithMetrics(c))
	b, bctx := p.NewBatch(ctx, crew.WithTenant("t"))
	require.NoError(t, b.Submit(bctx, func(context.Context) error { return errors.New("x") }))
	require.Error(t, b.Wait())
	a := crew.Spawn(ctx, func(context.Context, int) error { return nil }, crew.WithName("every"), crew.WithMetrics(c))
	require.NoError(t, a.Tell(ctx, 1))
	return c, reg, func() {
		a.Drain()
		<-a.Done()
		require.NoError(t, p.Wait())
	}
}

// Every family passes promlint (names, units, HELP).
func TestTheMetricsPassPromlint(t *testing.T) {
	c, _, end := everyFamily(t)
	defer end()
	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	assert.Empty(t, problems)
	assert.Equal(t, 17+9, testutil.CollectAndCount(c), "a series per family: a live pool's 17, its tenant's included, and a live actor's 9")
}

func TestTheOptionsNameLabelAndBucketTheSeries(t *testing.T) {
	c, reg := registered(t, promcrew.WithNamespace("app"), promcrew.WithConstLabels(map[string]string{"service": "thumbs"}),
		promcrew.WithBuckets(0.5, 1))
	p := crew.NewGroup(1, crew.WithName("opts"), crew.WithMetrics(c))
	require.NoError(t, p.Submit(context.Background(), func(context.Context) error { return nil }))
	require.NoError(t, p.Wait())

	f := scrape(t, reg)
	assert.Equal(t, 1.0, f.value("app_pool_jobs_submitted_total", "pool", "opts", "service", "thumbs"))
	assert.Nil(t, f["crew_pool_jobs_submitted_total"])
	run := f.series("app_pool_run_seconds", "pool", "opts", "service", "thumbs").GetHistogram()
	require.NotNil(t, run)
	require.Len(t, run.GetBucket(), 3, "the buckets given, and +Inf")
	assert.Equal(t, 0.5, run.GetBucket()[0].GetUpperBound())
	assert.Equal(t, 1.0, run.GetBucket()[1].GetUpperBound())

}

func TestAnUnknownKindOfSourceIsNotTracked(t *testing.T) {
	c := promcrew.New()
	assert.Nil(t, c.Track(crew.Source{Kind: crew.SourceKind(99), Name: "x"}))
}

// Scrapes while jobs run and end, for the race detector.
func TestScrapesRaceWithJobsAndEnds(t *testing.T) {
	c, reg := registered(t)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20 {
			p := crew.NewGroup(2, crew.WithName("racy"), crew.WithMetrics(c))
			for range 50 {
				_ = p.Submit(context.Background(), func(context.Context) error { return nil })
			}
			_ = p.Wait()
		}
	}()
	for scrapes := 0; ; scrapes++ {
		select {
		case <-done:
			f := scrape(t, reg)
			assert.Equal(t, 1000.0, f.value("crew_pool_jobs_completed_total", "pool", "racy"))
			assert.Equal(t, noGauges, gaugesOf(f, "racy"))
			return
		default:
			scrape(t, reg)
		}
	}
}

// buckets returns the cumulative counts of a histogram series by upper
// bound, +Inf included.
func buckets(f families, name string, pairs ...string) map[float64]uint64 {
	b := make(map[float64]uint64)
	for _, bucket := range f.series(name, pairs...).GetHistogram().GetBucket() {
		b[bucket.GetUpperBound()] = bucket.GetCumulativeCount()
	}
	return b
}

// In a bubble, a job that sleeps d runs exactly d: each job's queue wait
// and run time land in the bucket they belong to ("le": a duration equal
// to a bound is in its bucket), and the sums keep adding up from scrape to
// scrape.
func TestTheHistogramsBucketEachJobByItsDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, reg := registered(t, promcrew.WithBuckets(0.001, 0.002, math.Inf(1)))
		p := crew.NewGroup(1, crew.WithQueueSize(4), crew.WithName("timed"), crew.WithMetrics(c))
		ctx := context.Background()
		sleep := func(d time.Duration) crew.Job {
			return func(context.Context) error { time.Sleep(d); return nil }
		}
		done := make(chan struct{})
		for _, job := range []crew.Job{sleep(time.Millisecond), sleep(1500 * time.Microsecond), // they wait 0, 1 ms
			func(ctx context.Context) error { defer close(done); return sleep(3 * time.Millisecond)(ctx) }} { // and 2.5 ms
			require.NoError(t, p.Submit(ctx, job))
		}
		<-done
		synctest.Wait() // the worker has reported the last job, and waits for the next
		inf := math.Inf(1)
		for range 2 { // a scrape changes nothing
			f := scrape(t, reg)
			assert.Equal(t, map[float64]uint64{0.001: 1, 0.002: 2, inf: 3}, buckets(f, "crew_pool_run_seconds", "pool", "timed"))
			assert.InDelta(t, 0.0055, f.series("crew_pool_run_seconds", "pool", "timed").GetHistogram().GetSampleSum(), 1e-12)
			assert.Equal(t, map[float64]uint64{0.001: 2, 0.002: 2, inf: 3}, buckets(f, "crew_pool_queue_wait_seconds", "pool", "timed"))
			assert.InDelta(t, 0.0035, f.series("crew_pool_queue_wait_seconds", "pool", "timed").GetHistogram().GetSampleSum(), 1e-12)
		}

		require.NoError(t, p.Submit(ctx, sleep(time.Millisecond)))
		require.NoError(t, p.Wait())
		f := scrape(t, reg)
		assert.Equal(t, map[float64]uint64{0.001: 2, 0.002: 3, inf: 4}, buckets(f, "crew_pool_run_seconds", "pool", "timed"))
		assert.InDelta(t, 0.0065, f.series("crew_pool_run_seconds", "pool", "timed").GetHistogram().GetSampleSum(), 1e-12)
	})
}

func TestWithBucketsThatDoNotIncreasePanics(t *testing.T) {
	assert.PanicsWithValue(t, "promcrew: WithBuckets: the upper bounds must increase", func() { promcrew.WithBuckets(1, 1) })
	assert.PanicsWithValue(t, "promcrew: WithBuckets: the upper bounds must increase", func() { promcrew.WithBuckets(2, 1) })
}

// A pool WithAdaptiveSize counts its changes of size, by why, in counters
// of their own; its size is the workers gauge.
func TestTheChangesOfAnAdaptivePoolsSizeAreCounted(t *testing.T) {
	c := promcrew.New()
	r := c.Track(crew.Source{Kind: crew.SourcePool, Name: "sized"})
	r.Add(crew.EventGrown, 1)
	r.Add(crew.EventShrunk, 2)
	r.Add(crew.EventBackedOff, 3)
	r.Close()
	want := `
# HELP crew_pool_size_backed_off_total Times a pool WithAdaptiveSize backed off: more than 1 job in 10 of a window failed.
# TYPE crew_pool_size_backed_off_total counter
crew_pool_size_backed_off_total{pool="sized"} 3
# HELP crew_pool_size_grown_total Times a pool WithAdaptiveSize grew: run time at its no-load level, the pool busy.
# TYPE crew_pool_size_grown_total counter
crew_pool_size_grown_total{pool="sized"} 1
# HELP crew_pool_size_shrunk_total Times a pool WithAdaptiveSize shrank: run time above its no-load level, or a growth that did not raise throughput undone.
# TYPE crew_pool_size_shrunk_total counter
crew_pool_size_shrunk_total{pool="sized"} 2
`
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(want),
		"crew_pool_size_grown_total", "crew_pool_size_shrunk_total", "crew_pool_size_backed_off_total"))
}
