package otelcrew

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/crewlib/crew"
)

// A recorder is the crew.Recorder of one source. It counts in its name's
// atomics, and records durations with options built as its name was
// first tracked, passing the SDK the same slices every time: it allocates
// nothing.
type recorder struct {
	m      *Metrics
	named  *named
	gauges func() crew.Gauges
	closed atomic.Bool // Close has forgotten the source
}

// Add counts n events of kind e.
func (r *recorder) Add(e crew.Event, n int) {
	if e >= crew.EventSubmitted && int(e) < len(r.named.counts) {
		r.named.counts[e].Add(int64(n))
	}
}

// Observe records d in seconds: a queue wait or a run time; a run time
// counts to its tenant's too, if it has one.
func (r *recorder) Observe(t crew.Timing, d time.Duration, tenant string) {
	var h metric.Float64Histogram
	switch t {
	case crew.QueueWait:
		h = r.named.fam.wait
	case crew.RunTime:
		h = r.named.fam.run
		if tenant != "" && r.named.fam.tenantTime != nil {
			r.named.tenants.of(tenant).ran.Add(int64(d))
		}
	}
	if h != nil {
		h.Record(context.Background(), d.Seconds(), r.named.record...)
	}
}

// Close forgets the source: its gauges are no longer observed.
func (r *recorder) Close() {
	if r.closed.CompareAndSwap(false, true) {
		r.m.forget(r)
	}
}

// tenants holds the run time of each tenant of a pool. Lookups read
// an immutable map through an atomic pointer: no lock, no allocation; a
// new tenant copies the map. Tenants are few (crew reports run time by
// tenant, never by batch), so the copies are too.
type tenants struct {
	key  attribute.Key
	name string

	mu sync.Mutex // guards the writes of byName
	// byName maps a tenant to its run time.
	byName atomic.Pointer[map[string]*tenant]
}

// A tenant is the run time of one tenant's jobs, and the options of its
// observation.
type tenant struct {
	ran     atomic.Int64 // nanoseconds
	observe []metric.ObserveOption
}

// init sets the pool's attribute, key=name, that each tenant's set holds
// beside the tenant's.
func (t *tenants) init(key attribute.Key, name string) {
	t.key, t.name = key, name
	t.byName.Store(&map[string]*tenant{})
}

// of returns tenant name's run time, made on its first job.
func (t *tenants) of(name string) *tenant {
	if tt, ok := (*t.byName.Load())[name]; ok {
		return tt
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := *t.byName.Load()
	if tt, ok := old[name]; ok { // added since the lookup above
		return tt
	}
	set := attribute.NewSet(t.key.String(t.name), TenantKey.String(name))
	tt := &tenant{observe: []metric.ObserveOption{metric.WithAttributeSet(set)}}
	m := make(map[string]*tenant, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[name] = tt
	t.byName.Store(&m)
	return tt
}
