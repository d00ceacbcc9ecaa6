package promcrew_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
	"github.com/crewlib/crew/promcrew"
)

// A job's events, as a pool reports them, allocate nothing, a tenant's
// included once the tenant has been seen.
func TestARecordersEventsDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	c := promcrew.New()
	pool := c.Track(crew.Source{Kind: crew.SourcePool, Name: "p", Gauges: func() crew.Gauges { return crew.Gauges{} }})
	actor := c.Track(crew.Source{Kind: crew.SourceActor, Name: "a", Gauges: func() crew.Gauges { return crew.Gauges{} }})
	d := 3 * time.Microsecond
	job := func() {
		pool.Add(crew.EventSubmitted, 1)
		pool.Observe(crew.QueueWait, d, "")
		pool.Observe(crew.RunTime, d, "tenant")
		pool.Add(crew.EventCompleted, 1)
		actor.Add(crew.EventSubmitted, 1)
		actor.Add(crew.EventCompleted, 1)
	}
	job() // sees the tenant
	assert.Zero(t, testing.AllocsPerRun(10_000, job))
	pool.Close()
	actor.Close()
}

func TestAPoolWithACollectorDoesNotAllocatePerJob(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	p := crew.NewPool(1, func(context.Context, int) error { return nil }, crew.WithQueueSize(1),
		crew.WithMetrics(promcrew.New()))
	ctx := context.Background()
	const jobs = 20_000
	allocs := testing.AllocsPerRun(1, func() {
		for v := range jobs {
			_ = p.Submit(ctx, v)
		}
	})
	require.NoError(t, p.Wait())
	assert.Less(t, allocs/jobs, 0.001, "%v allocations for %d jobs", allocs, jobs)
}

// Many goroutines report to one source and to sources of one name at
// once: the counts add up exactly (and the race detector sees no race).
func TestRecordersAreSafeForConcurrentUse(t *testing.T) {
	c, reg := registered(t)
	src := crew.Source{Kind: crew.SourcePool, Name: "p", Gauges: func() crew.Gauges { return crew.Gauges{Workers: 1} }}
	recs := []crew.Recorder{c.Track(src), c.Track(src)}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r := recs[g%2]
			for i := range 1000 {
				r.Add(crew.EventSubmitted, 2)
				r.Observe(crew.RunTime, time.Millisecond, []string{"a", "b", ""}[i%3])
			}
		})
	}
	wg.Wait()
	f := scrape(t, reg)
	assert.Equal(t, 16000.0, f.value("crew_pool_jobs_submitted_total", "pool", "p"))
	assert.Equal(t, 8000, f.count("crew_pool_run_seconds", "pool", "p"))
	assert.Equal(t, 2.0, f.value("crew_pool_workers", "pool", "p"), "two live sources of one name")
	recs[0].Close()
	recs[0].Close() // twice is harmless
	assert.Equal(t, 1.0, scrape(t, reg).value("crew_pool_workers", "pool", "p"))
	recs[1].Close()
	assert.Equal(t, -1.0, scrape(t, reg).value("crew_pool_workers", "pool", "p"))
}
