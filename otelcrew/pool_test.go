package otelcrew_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
	"github.com/crewlib/crew/otelcrew"
)

// inBackground runs f on a goroutine of its own and returns its result.
func inBackground(f func() error) <-chan error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	return done
}

// hold returns a job that waits for release.
func hold(release <-chan struct{}) crew.Job {
	return func(context.Context) error { <-release; return nil }
}

// sleep returns a job that sleeps d: in a bubble, it runs exactly d.
func sleep(d time.Duration) crew.Job {
	return func(context.Context) error { time.Sleep(d); return nil }
}

func TestAPoolsJobsAreCountedAndTimedExactlyAfterWait(t *testing.T) {
	m, reader := newMetrics(t)
	p := crew.NewGroup(3, crew.WithName("work"), crew.WithMetrics(m))
	ctx := context.Background()
	const ok, failing, panicking = 14, 4, 2
	for range ok {
		require.NoError(t, p.Submit(ctx, func(context.Context) error { return nil }))
	}
	for range failing {
		require.NoError(t, p.Submit(ctx, func(context.Context) error { return errors.New("boom") }))
	}
	for range panicking {
		require.NoError(t, p.Submit(ctx, func(context.Context) error { panic("kaboom") }))
	}
	require.Error(t, p.Wait())

	r := collect(t, reader)
	counts, levels := r.split("crew.pool=work")
	const all = ok + failing + panicking
	assert.Equal(t, poolCounts(all, all, failing+panicking, panicking, 0, 0, 0), counts)
	assert.Empty(t, levels, "the pool has ended: its gauges are gone")
	hists := of(r.hists, "crew.pool.", "crew.pool=work")
	require.Len(t, hists, 2)
	for _, name := range []string{"crew.pool.job.wait.duration", "crew.pool.job.run.duration"} {
		assert.EqualValues(t, all, hists[name].Count, "%s: one observation per job", name)
		assert.Equal(t, []float64{1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4,
			1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}, hists[name].Bounds,
			"%s: the default buckets, 1 µs to 10 s", name)
	}
	assert.Empty(t, r.floats, "no tenant")
}

// Two pools share a name: their counts and gauges add up; as each ends,
// its gauges leave the sum and its counts stay.
func TestAPoolsGaugesShowHeldJobsAndABlockedSubmitAndAddUpByName(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, reader := newMetrics(t)
		ctx := context.Background()
		release1, release2 := make(chan struct{}), make(chan struct{})
		p1 := crew.NewGroup(2, crew.WithQueueSize(1), crew.WithName("shared"), crew.WithMetrics(m)) // holds 4 jobs
		p2 := crew.NewGroup(1, crew.WithName("shared"), crew.WithMetrics(m))
		synctest.Wait()
		_, levels := collect(t, reader).split("crew.pool=shared")
		assert.Equal(t, poolLevels(0, 0, 3, 0), levels, "idle: the workers of both")

		for range 4 {
			require.NoError(t, p1.Submit(ctx, hold(release1)))
		}
		blocked := inBackground(func() error { return p1.Submit(ctx, hold(release1)) })
		require.NoError(t, p2.Submit(ctx, hold(release2)))
		synctest.Wait() // p1: two run, two wait, one Submit is blocked; p2: one runs
		counts, levels := collect(t, reader).split("crew.pool=shared")
		assert.Equal(t, poolLevels(2, 3, 3, 1), levels)
		assert.Equal(t, poolCounts(5, 0, 0, 0, 0, 0, 0), counts, "the blocked Submit's job is not accepted yet")

		close(release1)
		require.NoError(t, <-blocked)
		require.NoError(t, p1.Wait())
		r := collect(t, reader)
		counts, levels = r.split("crew.pool=shared")
		assert.Equal(t, poolLevels(0, 1, 1, 0), levels, "p2's alone")
		assert.Equal(t, poolCounts(6, 5, 0, 0, 0, 0, 0), counts)

		close(release2)
		require.NoError(t, p2.Wait())
		r = collect(t, reader)
		counts, levels = r.split("crew.pool=shared")
		assert.Empty(t, levels, "both ended: the name's gauges are gone")
		assert.Equal(t, poolCounts(6, 6, 0, 0, 0, 0, 0), counts, "the counts stay")
		assert.EqualValues(t, 6, r.hists["crew.pool.job.wait.duration{crew.pool=shared}"].Count)
		assert.EqualValues(t, 6, r.hists["crew.pool.job.run.duration{crew.pool=shared}"].Count)
	})
}

// In a bubble a job that sleeps d runs exactly d, so the histograms' sums,
// extremes and buckets are exact: the first job runs at once, for 10 ms;
// the second waits 10 ms for it and runs 20 ms; a third, let in as the
// first ends, waits 20 ms and runs 1 ms.
func TestQueueWaitsAndRunTimesAreRecordedInSeconds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, reader := newMetrics(t, otelcrew.WithBuckets(0.005, 0.015))
		p := crew.NewGroup(1, crew.WithQueueSize(1), crew.WithName("timed"), crew.WithMetrics(m)) // holds 2 jobs
		ctx := context.Background()
		require.NoError(t, p.Submit(ctx, sleep(10*time.Millisecond)))
		require.NoError(t, p.Submit(ctx, sleep(20*time.Millisecond)))
		blocked := inBackground(func() error { return p.Submit(ctx, sleep(time.Millisecond)) })
		synctest.Wait()
		require.NoError(t, <-blocked)
		require.NoError(t, p.Wait())

		hists := of(collect(t, reader).hists, "crew.pool.", "crew.pool=timed")
		for _, c := range []struct {
			name          string
			sum, min, max float64
			buckets       []uint64 // <= 5 ms, <= 15 ms, more
		}{
			{"crew.pool.job.wait.duration", 0.030, 0, 0.020, []uint64{1, 1, 1}},
			{"crew.pool.job.run.duration", 0.031, 0.001, 0.020, []uint64{1, 1, 1}},
		} {
			h := hists[c.name]
			assert.EqualValues(t, 3, h.Count, c.name)
			assert.InDelta(t, c.sum, h.Sum, 1e-12, c.name)
			assert.Equal(t, []float64{0.005, 0.015}, h.Bounds, c.name)
			assert.Equal(t, c.buckets, h.BucketCounts, c.name)
			lo, _ := h.Min.Value()
			hi, _ := h.Max.Value()
			assert.InDelta(t, c.min, lo, 1e-12, c.name)
			assert.InDelta(t, c.max, hi, 1e-12, c.name)
		}
	})
}

// A fair pool's run time is counted per tenant, never per batch; the
// pool's own jobs and the batches without a tenant are in the run time
// histogram alone.
func TestAFairPoolsRunTimeIsCountedPerTenant(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, reader := newMetrics(t)
		p := crew.NewGroup(2, crew.WithFairShare(), crew.WithName("fair"), crew.WithMetrics(m))
		ctx := context.Background()
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

		r := collect(t, reader)
		require.Len(t, r.floats, 2, "one point per tenant: %v", r.floats)
		assert.InDelta(t, 0.006, r.floats["crew.pool.tenant.time{crew.pool=fair,crew.tenant=a}"], 1e-12)
		assert.InDelta(t, 0.003, r.floats["crew.pool.tenant.time{crew.pool=fair,crew.tenant=b}"], 1e-12)
		run := r.hists["crew.pool.job.run.duration{crew.pool=fair}"]
		assert.EqualValues(t, 11, run.Count)
		assert.InDelta(t, 0.012, run.Sum, 1e-12, "the tenants' 9 ms and the rest's 3 ms")
	})
}
