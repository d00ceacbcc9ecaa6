package otelcrew_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/crewlib/crew"
	"github.com/crewlib/crew/otelcrew"
)

// source returns a Source of kind and name whose gauges are *g.
func source(kind crew.SourceKind, name string, g *crew.Gauges) crew.Source {
	return crew.Source{Kind: kind, Name: name, Gauges: func() crew.Gauges { return *g }}
}

// Each event and timing goes to the instrument the README names, with the
// unit and kind it gives.
func TestEachEventGoesToItsInstrument(t *testing.T) {
	m, reader := newMetrics(t)
	pool := m.Track(source(crew.SourcePool, "p", &crew.Gauges{Queued: 1, Running: 2, Workers: 3, Blocked: 4}))
	actor := m.Track(source(crew.SourceActor, "a", &crew.Gauges{Queued: 5, Running: 1, Workers: 1}))
	events := []crew.Event{crew.EventSubmitted, crew.EventCompleted, crew.EventFailed, crew.EventPanicked, crew.EventSkipped, crew.EventDropped, crew.EventReplaced,
		crew.EventGrown, crew.EventShrunk, crew.EventBackedOff}
	for i, e := range events {
		pool.Add(e, i+1)
		actor.Add(e, 10*(i+1))
	}
	pool.Observe(crew.QueueWait, 3*time.Millisecond, "")
	pool.Observe(crew.RunTime, 5*time.Millisecond, "t")
	actor.Observe(crew.RunTime, time.Second, "ignored")
	pool.Add(crew.Event(99), 1) // an event crew may add later: ignored
	pool.Observe(crew.Timing(99), time.Second, "")

	r := collect(t, reader)
	counts, levels := r.split("crew.pool=p")
	assert.Equal(t, poolCounts(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), counts)
	assert.Equal(t, poolLevels(1, 2, 3, 4), levels)
	counts, levels = r.split("crew.actor=a")
	assert.Equal(t, actorCounts(10, 20, 30, 40, 60, 70), counts, "an actor skips nothing, and has no size of its own")
	assert.Equal(t, actorLevels(5, 1, 1), levels)
	assert.InDelta(t, 0.003, r.hists["crew.pool.job.wait.duration{crew.pool=p}"].Sum, 1e-12)
	assert.InDelta(t, 0.005, r.hists["crew.pool.job.run.duration{crew.pool=p}"].Sum, 1e-12)
	assert.InDelta(t, 0.005, r.floats["crew.pool.tenant.time{crew.pool=p,crew.tenant=t}"], 1e-12)
	assert.Len(t, r.hists, 2)
	assert.Len(t, r.floats, 1)

	for _, c := range []struct {
		name, unit string
		kind       string // "counter", "updown", "histogram"
	}{
		{"crew.pool.submitted.jobs", "{job}", "counter"},
		{"crew.pool.completed.jobs", "{job}", "counter"},
		{"crew.pool.failed.jobs", "{job}", "counter"},
		{"crew.pool.panicked.jobs", "{job}", "counter"},
		{"crew.pool.skipped.jobs", "{job}", "counter"},
		{"crew.pool.dropped.jobs", "{job}", "counter"},
		{"crew.pool.replaced.workers", "{worker}", "counter"},
		{"crew.pool.size.grown", "{resize}", "counter"},
		{"crew.pool.size.shrunk", "{resize}", "counter"},
		{"crew.pool.size.backed_off", "{resize}", "counter"},
		{"crew.pool.job.wait.duration", "s", "histogram"},
		{"crew.pool.job.run.duration", "s", "histogram"},
		{"crew.pool.tenant.time", "s", "counter"},
		{"crew.pool.queue.length", "{job}", "updown"},
		{"crew.pool.job.running", "{job}", "updown"},
		{"crew.pool.worker.count", "{worker}", "updown"},
		{"crew.pool.submit.blocked", "{submit}", "updown"},
		{"crew.actor.told.messages", "{message}", "counter"},
		{"crew.actor.handled.messages", "{message}", "counter"},
		{"crew.actor.failed.messages", "{message}", "counter"},
		{"crew.actor.panicked.messages", "{message}", "counter"},
		{"crew.actor.dropped.messages", "{message}", "counter"},
		{"crew.actor.replaced.goroutines", "{goroutine}", "counter"},
		{"crew.actor.mailbox.length", "{message}", "updown"},
		{"crew.actor.busy", "{actor}", "updown"},
		{"crew.actor.count", "{actor}", "updown"},
	} {
		t.Run(c.name+" is a "+c.kind+" in "+c.unit, func(t *testing.T) {
			got, ok := r.metrics[c.name]
			require.True(t, ok)
			assert.Equal(t, c.unit, got.Unit)
			assert.NotEmpty(t, got.Description)
			kind := "histogram"
			switch data := got.Data.(type) {
			case metricdata.Sum[int64]:
				kind = map[bool]string{true: "counter", false: "updown"}[data.IsMonotonic]
				assert.Equal(t, metricdata.CumulativeTemporality, data.Temporality)
			case metricdata.Sum[float64]:
				kind = map[bool]string{true: "counter", false: "updown"}[data.IsMonotonic]
			}
			assert.Equal(t, c.kind, kind)
		})
	}
	assert.Len(t, r.metrics, 26, "every instrument is listed above")
}

// A source that has ended is forgotten: its gauges leave its name's sum
// and its counts stay; a name whose sources have all ended has no gauges
// until another source takes it.
func TestAnEndedSourceIsForgottenAndItsCountsStay(t *testing.T) {
	m, reader := newMetrics(t)
	g1, g2 := crew.Gauges{Queued: 1, Workers: 2}, crew.Gauges{Queued: 10, Workers: 20}
	first := m.Track(source(crew.SourcePool, "x", &g1))
	second := m.Track(source(crew.SourcePool, "x", &g2))
	first.Add(crew.EventSubmitted, 1)
	second.Add(crew.EventSubmitted, 2)
	levels := func() map[string]int64 {
		_, l := collect(t, reader).split("crew.pool=x")
		return l
	}
	assert.Equal(t, int64(11), levels()["crew.pool.queue.length"])

	first.Close()
	first.Close() // a second Close does nothing
	assert.Equal(t, int64(10), levels()["crew.pool.queue.length"])
	second.Close()
	assert.Empty(t, levels())
	first.Add(crew.EventDropped, 1) // the one call allowed after Close

	third := m.Track(source(crew.SourcePool, "x", &crew.Gauges{Workers: 1}))
	counts, l := collect(t, reader).split("crew.pool=x")
	assert.Equal(t, poolLevels(0, 0, 1, 0), l)
	assert.Equal(t, poolCounts(3, 0, 0, 0, 0, 1, 0), counts, "the counts stay")
	third.Close()
}

// An actor and a router of one name add up, as sources of one name do.
func TestAnActorAndARouterOfOneNameAddUp(t *testing.T) {
	m, reader := newMetrics(t)
	actor := m.Track(source(crew.SourceActor, "n", &crew.Gauges{Workers: 1}))
	router := m.Track(source(crew.SourceRouter, "n", &crew.Gauges{Workers: 4}))
	pool := m.Track(source(crew.SourcePool, "n", &crew.Gauges{Workers: 8}))
	defer actor.Close()
	defer router.Close()
	defer pool.Close()
	r := collect(t, reader)
	assert.Equal(t, int64(5), r.ints["crew.actor.count{crew.actor=n}"])
	assert.Equal(t, int64(8), r.ints["crew.pool.worker.count{crew.pool=n}"], "a pool of the same name is apart")
}

func TestTrackIgnoresAnUnknownKindOfSource(t *testing.T) {
	m, _ := newMetrics(t)
	assert.Nil(t, m.Track(crew.Source{Kind: crew.SourceKind(99), Name: "?"}))
}

// A job costs no allocation: the options of its measurements were built
// as its source was tracked (as its tenant's first job ended, for a
// tenant's).
func TestRecordingAJobAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	m, _ := newMetrics(t)
	pool := m.Track(source(crew.SourcePool, "p", &crew.Gauges{}))
	defer pool.Close()
	actor := m.Track(source(crew.SourceActor, "a", &crew.Gauges{}))
	defer actor.Close()
	job := func() {
		pool.Add(crew.EventSubmitted, 1)
		pool.Observe(crew.QueueWait, time.Microsecond, "")
		pool.Observe(crew.RunTime, time.Millisecond, "tenant")
		pool.Add(crew.EventCompleted, 1)
		actor.Add(crew.EventSubmitted, 1)
		actor.Add(crew.EventCompleted, 1)
	}
	job() // the SDK makes each data point once
	assert.Zero(t, testing.AllocsPerRun(1000, job))

	p := crew.NewGroup(2, crew.WithName("pool"), crew.WithMetrics(m))
	ctx := context.Background()
	noop := func(context.Context) error { return nil }
	require.NoError(t, p.Submit(ctx, noop))
	allocs := testing.AllocsPerRun(1000, func() { _ = p.Submit(ctx, noop) })
	require.NoError(t, p.Wait())
	assert.Zero(t, allocs, "through a pool")
}

// Recorders are used from many goroutines while sources come and go and
// the metrics are collected.
func TestRecordersAreSafeForConcurrentUse(t *testing.T) {
	m, reader := newMetrics(t)
	const goroutines, each = 8, 500
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Go(func() {
			r := m.Track(source(crew.SourcePool, "busy", &crew.Gauges{Workers: 1}))
			defer r.Close()
			for j := range each {
				r.Add(crew.EventSubmitted, 1)
				r.Observe(crew.RunTime, time.Microsecond, string(rune('a'+(i+j)%4)))
			}
		})
	}
	stop := make(chan struct{})
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for {
			select {
			case <-stop:
				return
			default:
				var rm metricdata.ResourceMetrics
				assert.NoError(t, reader.Collect(context.Background(), &rm))
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-collected
	r := collect(t, reader)
	assert.Equal(t, int64(goroutines*each), r.ints["crew.pool.submitted.jobs{crew.pool=busy}"])
	assert.EqualValues(t, goroutines*each, r.hists["crew.pool.job.run.duration{crew.pool=busy}"].Count)
	assert.Len(t, r.floats, 4, "four tenants")
	_, levels := r.split("crew.pool=busy")
	assert.Empty(t, levels)
}

func TestMisusePanics(t *testing.T) {
	assert.PanicsWithValue(t, "otelcrew: New: nil MeterProvider", func() { _, _ = otelcrew.New(nil) })
	assert.PanicsWithValue(t, "otelcrew: WithBuckets: the boundaries must increase strictly", func() { otelcrew.WithBuckets(1, 1) })
}
