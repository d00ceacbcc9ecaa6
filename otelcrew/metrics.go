package otelcrew

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/crewlib/crew"
)

// ScopeName is the instrumentation scope of the meter that New takes from
// its MeterProvider.
const ScopeName = "github.com/crewlib/crew/otelcrew"

// Metrics is a crew.Metrics that records what its pools, actors and routers
// report to OpenTelemetry instruments: give it to each with
// crew.WithMetrics. Counts are kept per name and reported, with the
// gauges of the live sources, when the metrics are collected; durations
// are recorded as they happen. Sources that share a name add up; a source
// that has ended is forgotten (its gauges stop) and its counts stay.
//
// A Metrics is safe for concurrent use. Its Recorders never block but for
// the instant the SDK takes to record a duration, and allocate nothing.
type Metrics struct {
	pools, actors family
	gauges        gauges

	mu sync.Mutex // guards names, and each named's live
	// names holds every name a source has had, for its counts stay.
	names map[nameKey]*named
}

// A nameKey is a name of a pool, or of an actor or router.
type nameKey struct {
	pool bool
	name string
}

// named is what the sources of one name share: their counts, the options
// of their measurements, built once, and the live ones, whose gauges add
// up.
type named struct {
	fam     *family
	counts  [crew.EventBackedOff + 1]atomic.Int64 // by crew.Event
	tenants tenants                               // a pool's tenants' run time
	record  []metric.RecordOption                 // the attribute set: crew.pool or crew.actor
	observe []metric.ObserveOption                // the same
	live    map[*recorder]struct{}                // guarded by Metrics.mu
}

// New returns a Metrics recording to instruments of mp's meter named
// ScopeName. It returns an error if mp refused an instrument or the
// callback that observes the asynchronous ones.
func New(mp metric.MeterProvider, opts ...Option) (*Metrics, error) {
	if mp == nil {
		panic("otelcrew: New: nil MeterProvider")
	}
	c := config{buckets: defaultBuckets}
	for _, o := range opts {
		o(&c)
	}
	meter := mp.Meter(ScopeName)
	m := &Metrics{names: make(map[nameKey]*named)}
	var errs [4]error
	m.pools, errs[0] = newPoolFamily(meter, c.buckets)
	m.actors, errs[1] = newActorFamily(meter)
	m.gauges, errs[2] = newGauges(meter)
	_, errs[3] = meter.RegisterCallback(m.observe, observables(&m.gauges, &m.pools, &m.actors)...)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return m, nil
}

// Track implements crew.Metrics: it returns the Recorder of a pool, an
// actor or a router, whose measurements carry s.Name; nil, to report
// nothing, for another kind of source.
func (m *Metrics) Track(s crew.Source) crew.Recorder {
	var fam *family
	switch s.Kind {
	case crew.SourcePool:
		fam = &m.pools
	case crew.SourceActor, crew.SourceRouter:
		fam = &m.actors
	default:
		return nil
	}
	key := nameKey{pool: s.Kind == crew.SourcePool, name: s.Name}

	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.names[key]
	if n == nil {
		n = newNamed(fam, s.Name)
		m.names[key] = n
	}
	r := &recorder{m: m, named: n, gauges: s.Gauges}
	n.live[r] = struct{}{}
	return r
}

// newNamed returns the named of name, in family fam.
func newNamed(fam *family, name string) *named {
	set := attribute.NewSet(fam.key.String(name))
	n := &named{
		fam:     fam,
		record:  []metric.RecordOption{metric.WithAttributeSet(set)},
		observe: []metric.ObserveOption{metric.WithAttributeSet(set)},
		live:    make(map[*recorder]struct{}),
	}
	n.tenants.init(fam.key, name)
	return n
}

// forget removes r from its name's live sources.
func (m *Metrics) forget(r *recorder) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(r.named.live, r)
}

// observe is the callback of the asynchronous instruments: it reports the
// counts of each name, and the sum of the gauges of its live sources, if
// it has any. Source.Gauges is quick and calls nothing of ours, so it is
// called under m.mu: a Track or a Close waits for the callback at most.
func (m *Metrics) observe(_ context.Context, o metric.Observer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, n := range m.names {
		n.fam.observe(o, n)
		if len(n.live) == 0 {
			continue
		}
		var sum crew.Gauges
		for r := range n.live {
			g := r.gauges()
			sum.Queued += g.Queued
			sum.Running += g.Running
			sum.Workers += g.Workers
			sum.Blocked += g.Blocked
		}
		m.gauges.observe(o, key.pool, sum, n.observe)
	}
	return nil
}
