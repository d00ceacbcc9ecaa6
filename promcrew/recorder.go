package promcrew

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/crewlib/crew"
)

// A series holds what the sources of one kind (pools, or actors and
// routers) and one name have reported: sources that share a name add up,
// and a series outlives them, for counters never go back.
type series struct {
	events             [eventCount]atomic.Uint64 // by crew.Event-1
	queueWait, runTime *timings                  // nil for actors and routers
	tenants            sync.Map                  // tenant -> *clock: a pool's run time by tenant
}

// tenant returns tenant's clock. Loading from the sync.Map neither locks
// nor allocates once the tenant is there: the first RunTime of a tenant
// makes its clock.
func (s *series) tenant(tenant string) *clock {
	if c, ok := s.tenants.Load(tenant); ok {
		return c.(*clock)
	}
	c, _ := s.tenants.LoadOrStore(tenant, new(clock))
	return c.(*clock)
}

// A recorder is the crew.Recorder of one source: it finds its series as
// it is made (Track), so that an event is one or two atomic adds, with no
// lookup, lock or allocation.
type recorder struct {
	c   *Collector
	src crew.Source
	s   *series
}

// Add counts n events of kind e (crew.Recorder).
func (r *recorder) Add(e crew.Event, n int) {
	if e >= crew.EventSubmitted && e <= crew.EventBackedOff && n > 0 {
		r.s.events[e-crew.EventSubmitted].Add(uint64(n))
	}
}

// Observe records duration d of kind t and, for a RunTime with a tenant,
// adds d to the tenant's run time (crew.Recorder).
func (r *recorder) Observe(t crew.Timing, d time.Duration, tenant string) {
	s := r.s
	if s.runTime == nil {
		return // an actor's or a router's: crew times only pools' jobs
	}
	switch t {
	case crew.QueueWait:
		s.queueWait.observe(d)
	case crew.RunTime:
		s.runTime.observe(d)
		if tenant != "" {
			s.tenant(tenant).add(d)
		}
	}
}

// Close stops the export of the source's gauges; its counts stay
// (crew.Recorder). Closing twice is harmless.
func (r *recorder) Close() { r.c.forget(r) }
