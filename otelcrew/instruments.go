package otelcrew

import (
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/crewlib/crew"
)

// The attributes of the data points.
const (
	PoolKey   = attribute.Key("crew.pool")   // a pool's name (crew.WithName)
	ActorKey  = attribute.Key("crew.actor")  // an actor's or a router's name
	TenantKey = attribute.Key("crew.tenant") // a pool's tenant (crew.WithTenant)
)

// A family is the instruments of the counts and durations of one kind of
// source: the pools, or the actors and routers. The counters are
// asynchronous: a source counts in its name's atomics (see named), which
// the callback reports, so that an event costs an atomic add and not a
// call into the SDK; durations go to the histograms as they happen.
type family struct {
	key    attribute.Key
	counts [crew.EventBackedOff + 1]metric.Int64ObservableCounter // by crew.Event; nil where the kind has none

	wait, run  metric.Float64Histogram         // pools only
	tenantTime metric.Float64ObservableCounter // pools only
}

// A counterSpec names the counter of one event, and its unit if not the
// family's.
type counterSpec struct {
	event            crew.Event
	name, desc, unit string
}

// newFamily makes the counters of specs under the unit unit, with attribute
// key key.
func newFamily(meter metric.Meter, key attribute.Key, unit string, specs []counterSpec) (family, error) {
	f := family{key: key}
	var errs []error
	for _, s := range specs {
		u := unit
		if s.unit != "" {
			u = s.unit
		}
		c, err := meter.Int64ObservableCounter(s.name, metric.WithUnit(u), metric.WithDescription(s.desc))
		errs = append(errs, err)
		f.counts[s.event] = c
	}
	return f, errors.Join(errs...)
}

// newPoolFamily makes the pools' counters, histograms (with bucket
// boundaries buckets) and tenants' run time.
func newPoolFamily(meter metric.Meter, buckets []float64) (family, error) {
	f, err := newFamily(meter, PoolKey, "{job}", []counterSpec{
		{crew.EventSubmitted, "crew.pool.submitted.jobs", "Jobs accepted by Submit or TrySubmit, a batch's included.", ""},
		{crew.EventCompleted, "crew.pool.completed.jobs", "Jobs that ran, failed or not.", ""},
		{crew.EventFailed, "crew.pool.failed.jobs", "Jobs that returned an error, panicked or called runtime.Goexit.", ""},
		{crew.EventPanicked, "crew.pool.panicked.jobs", "Jobs that panicked (counted as failed too).", ""},
		{crew.EventSkipped, "crew.pool.skipped.jobs", "Jobs skipped: their pool's or batch's context was done when they would have been dispatched.", ""},
		{crew.EventDropped, "crew.pool.dropped.jobs", "Jobs that became dead letters for another reason than a skip.", ""},
		{crew.EventReplaced, "crew.pool.replaced.workers", "Workers whose goroutine a runtime.Goexit (a job's, say) ended, each taken on at once by a new goroutine.", "{worker}"},
		{crew.EventGrown, "crew.pool.size.grown", "Times a pool WithAdaptiveSize grew: run time at its no-load level, the pool busy.", "{resize}"},
		{crew.EventShrunk, "crew.pool.size.shrunk", "Times a pool WithAdaptiveSize shrank: run time above its no-load level, or a growth that did not raise throughput undone.", "{resize}"},
		{crew.EventBackedOff, "crew.pool.size.backed_off", "Times a pool WithAdaptiveSize backed off: more than 1 job in 10 of a window failed.", "{resize}"},
	})
	errs := []error{err}
	f.wait, err = meter.Float64Histogram("crew.pool.job.wait.duration", metric.WithUnit("s"),
		metric.WithDescription("How long a job waited, from its acceptance to its dispatch."),
		metric.WithExplicitBucketBoundaries(buckets...))
	errs = append(errs, err)
	f.run, err = meter.Float64Histogram("crew.pool.job.run.duration", metric.WithUnit("s"),
		metric.WithDescription("How long a job ran, from its dispatch, failed or not."),
		metric.WithExplicitBucketBoundaries(buckets...))
	errs = append(errs, err)
	f.tenantTime, err = meter.Float64ObservableCounter("crew.pool.tenant.time", metric.WithUnit("s"),
		metric.WithDescription("The run time of the jobs of each tenant of a pool (crew.WithTenant)."))
	errs = append(errs, err)
	return f, errors.Join(errs...)
}

// newActorFamily makes the counters of actors and routers.
func newActorFamily(meter metric.Meter) (family, error) {
	return newFamily(meter, ActorKey, "{message}", []counterSpec{
		{crew.EventSubmitted, "crew.actor.told.messages", "Messages accepted by Tell or Broadcast.", ""},
		{crew.EventCompleted, "crew.actor.handled.messages", "Messages handled, failed or not.", ""},
		{crew.EventFailed, "crew.actor.failed.messages", "Messages whose handler returned an error, panicked or called runtime.Goexit.", ""},
		{crew.EventPanicked, "crew.actor.panicked.messages", "Messages whose handler panicked (counted as failed too).", ""},
		{crew.EventDropped, "crew.actor.dropped.messages", "Messages that became dead letters, a refused Tell's included.", ""},
		{crew.EventReplaced, "crew.actor.replaced.goroutines", "Actors whose goroutine a runtime.Goexit (in the handler, say) ended, each taken on at once by a new goroutine.", "{goroutine}"},
	})
}

// gauges are the asynchronous instruments, observed in one callback.
type gauges struct {
	// pools
	queued, running, workers, blocked metric.Int64ObservableUpDownCounter
	// actors and routers
	mailbox, busy, live metric.Int64ObservableUpDownCounter
}

// newGauges makes the asynchronous instruments.
func newGauges(meter metric.Meter) (gauges, error) {
	var errs []error
	udc := func(name, unit, desc string) metric.Int64ObservableUpDownCounter {
		c, err := meter.Int64ObservableUpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	g := gauges{
		queued:  udc("crew.pool.queue.length", "{job}", "Jobs waiting to be dispatched: the pool's backlog."),
		running: udc("crew.pool.job.running", "{job}", "Jobs running."),
		workers: udc("crew.pool.worker.count", "{worker}", "Live workers."),
		blocked: udc("crew.pool.submit.blocked", "{submit}", "Submits blocked on a full pool."),
		mailbox: udc("crew.actor.mailbox.length", "{message}", "Messages in the mailboxes."),
		busy:    udc("crew.actor.busy", "{actor}", "Actors handling a message."),
		live:    udc("crew.actor.count", "{actor}", "Actors that have not exited."),
	}
	return g, errors.Join(errs...)
}

// observables returns the asynchronous instruments of the families and
// the gauges, for the callback's registration.
func observables(g *gauges, fams ...*family) []metric.Observable {
	obs := []metric.Observable{g.queued, g.running, g.workers, g.blocked, g.mailbox, g.busy, g.live}
	for _, f := range fams {
		for _, c := range f.counts {
			if c != nil {
				obs = append(obs, c)
			}
		}
		if f.tenantTime != nil {
			obs = append(obs, f.tenantTime)
		}
	}
	return obs
}

// observe reports the counts of n, and its tenants' run time.
func (f *family) observe(o metric.Observer, n *named) {
	for e, c := range f.counts {
		if c != nil {
			o.ObserveInt64(c, n.counts[e].Load(), n.observe...)
		}
	}
	if f.tenantTime != nil {
		for _, t := range *n.tenants.byName.Load() {
			o.ObserveFloat64(f.tenantTime, time.Duration(t.ran.Load()).Seconds(), t.observe...)
		}
	}
}

// observe reports sum, the gauges of the sources of one name, with opts.
func (g *gauges) observe(o metric.Observer, pool bool, sum crew.Gauges, opts []metric.ObserveOption) {
	if pool {
		o.ObserveInt64(g.queued, int64(sum.Queued), opts...)
		o.ObserveInt64(g.running, int64(sum.Running), opts...)
		o.ObserveInt64(g.workers, int64(sum.Workers), opts...)
		o.ObserveInt64(g.blocked, int64(sum.Blocked), opts...)
		return
	}
	o.ObserveInt64(g.mailbox, int64(sum.Queued), opts...)
	o.ObserveInt64(g.busy, int64(sum.Running), opts...)
	o.ObserveInt64(g.live, int64(sum.Workers), opts...)
}
