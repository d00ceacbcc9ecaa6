package promcrew

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/crewlib/crew"
)

// A Collector is a prometheus.Collector and a crew.Metrics: register it,
// and give it to pools, actors and routers with crew.WithMetrics. It keeps
// the counts and timings of every source it has tracked, by name, and
// reads the gauges of those still running as it is collected. A Collector
// is safe for concurrent use. Its Recorders never block, but for a brief
// lock the first time a pool's Recorder sees a tenant; a Track waits
// for a Collect that is folding the sums, briefly.
type Collector struct {
	upper  []float64 // the histograms' upper bounds, in seconds
	bounds []int64   // the same, in nanoseconds

	pool, actor                   family
	queueWait, runTime, tenantRun *prometheus.Desc // pools'

	mu   sync.Mutex             // guards pool.names, actor.names, live, and the sums the series fold
	live map[*recorder]struct{} // the sources tracked and not yet closed
}

// A family is what a Collector exports of one kind of source, pools or
// actors (and routers).
type family struct {
	events [eventCount]*prometheus.Desc // by crew.Event-1; nil: not exported for the kind
	gauges [4]*prometheus.Desc          // Queued, Running, Workers, Blocked; nil: not exported
	names  map[string]*series           // guarded by Collector.mu
}

const eventCount = int(crew.EventBackedOff)

// New returns a Collector of crew's metrics (see the package doc for the
// families), to register with Prometheus and give to crew.WithMetrics.
func New(opts ...Option) *Collector {
	cfg := config{namespace: "crew", upper: DefaultBuckets}
	for _, o := range opts {
		o(&cfg)
	}
	desc := func(subsystem, name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(cfg.namespace, subsystem, name), help, labels, cfg.labels)
	}
	pool := func(name, help string) *prometheus.Desc { return desc("pool", name, help, "pool") }
	actor := func(name, help string) *prometheus.Desc { return desc("actor", name, help, "actor") }
	return &Collector{
		upper:  cfg.upper,
		bounds: nanos(cfg.upper),
		pool: family{
			events: [eventCount]*prometheus.Desc{
				pool("jobs_submitted_total", "Jobs accepted by Submit or TrySubmit, a batch's included."),
				pool("jobs_completed_total", "Jobs that ran, failed or not."),
				pool("jobs_failed_total", "Jobs that returned an error, panicked or called runtime.Goexit."),
				pool("jobs_panicked_total", "Jobs that panicked (counted in failed too)."),
				pool("jobs_skipped_total", "Jobs skipped: their pool's or batch's context was done when they would have been dispatched."),
				pool("jobs_dropped_total", "Jobs that became dead letters for another reason than a skip (evicted from a bounded mailbox, say)."),
				pool("workers_replaced_total", "Workers whose goroutine a runtime.Goexit (a job's, say) ended, each taken on at once by a new goroutine."),
				pool("size_grown_total", "Times a pool WithAdaptiveSize grew: run time at its no-load level, the pool busy."),
				pool("size_shrunk_total", "Times a pool WithAdaptiveSize shrank: run time above its no-load level, or a growth that did not raise throughput undone."),
				pool("size_backed_off_total", "Times a pool WithAdaptiveSize backed off: more than 1 job in 10 of a window failed."),
			},
			gauges: [4]*prometheus.Desc{
				pool("queued_jobs", "Jobs waiting to be dispatched: the pool's backlog."),
				pool("running_jobs", "Jobs running."),
				pool("workers", "Live workers."),
				pool("blocked_submits", "Submits blocked on a full pool."),
			},
			names: make(map[string]*series),
		},
		queueWait: pool("queue_wait_seconds", "How long a job waited, from its acceptance (Submit returning, or a blocked Submit let in) to its dispatch: 0 for a job handed straight to an idle worker or run inline; none for a pool given WithMailbox."),
		runTime:   pool("run_seconds", "How long a job ran, failed or not."),
		tenantRun: desc("pool", "tenant_run_seconds_total", "Run time of a pool's jobs by tenant (WithTenant); the jobs without a tenant are in crew_pool_run_seconds_sum only.", "pool", "tenant"),
		// An actor or a router reports Submitted for a message told,
		// Completed for one handled and Dropped for a dead letter; it
		// skips nothing.
		actor: family{
			events: [eventCount]*prometheus.Desc{
				actor("messages_told_total", "Messages accepted by Tell or Broadcast."),
				actor("messages_handled_total", "Messages handled, failed or not."),
				actor("messages_failed_total", "Messages whose handler returned an error, panicked or called runtime.Goexit."),
				actor("messages_panicked_total", "Messages whose handler panicked (counted in failed too)."),
				nil,
				actor("dead_letters_total", "Messages that became dead letters, a Tell refused after the end included."),
				actor("goroutines_replaced_total", "Actors whose goroutine a runtime.Goexit (in the handler, say) ended, each taken on at once by a new goroutine."),
				nil, nil, nil,
			},
			gauges: [4]*prometheus.Desc{
				actor("mailbox_depth", "Messages waiting in the mailboxes, not counting those being handled."),
				actor("busy", "Messages being handled: 1 while an actor handles one, else 0; for a router, its routees handling one."),
				actor("live", "Actors that have not exited: 1 until an actor exits; for a router, its routees."),
				nil,
			},
			names: make(map[string]*series),
		},
		live: make(map[*recorder]struct{}),
	}
}

// Describe sends the descriptions of every family (prometheus.Collector).
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range []*family{&c.pool, &c.actor} {
		for _, d := range append(f.events[:], f.gauges[:]...) {
			if d != nil {
				ch <- d
			}
		}
	}
	ch <- c.queueWait
	ch <- c.runTime
	ch <- c.tenantRun
}

// Collect sends the counts and histograms of every name tracked, and the
// gauges of the live sources, summed by name (prometheus.Collector). It
// reads each live source's gauges (crew.Source.Gauges): a pool's under its
// lock, briefly.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	var ms []prometheus.Metric
	for name, s := range c.pool.names {
		ms = c.pool.counts(ms, name, s)
		n, sum, buckets := s.queueWait.fold(c.upper)
		ms = append(ms, prometheus.MustNewConstHistogram(c.queueWait, n, sum, buckets, name))
		n, sum, buckets = s.runTime.fold(c.upper)
		ms = append(ms, prometheus.MustNewConstHistogram(c.runTime, n, sum, buckets, name))
		s.tenants.Range(func(tenant, run any) bool {
			ms = append(ms, prometheus.MustNewConstMetric(c.tenantRun, prometheus.CounterValue, run.(*clock).fold(), name, tenant.(string)))
			return true
		})
	}
	for name, s := range c.actor.names {
		ms = c.actor.counts(ms, name, s)
	}
	live := make([]*recorder, 0, len(c.live))
	for r := range c.live {
		live = append(live, r)
	}
	c.mu.Unlock()
	for _, m := range ms {
		ch <- m
	}

	// Read outside c.mu, so that no Track or Close waits on a pool's lock.
	pools, actors := make(map[string]crew.Gauges), make(map[string]crew.Gauges)
	for _, r := range live {
		sums := actors
		if r.src.Kind == crew.SourcePool {
			sums = pools
		}
		g, s := r.src.Gauges(), sums[r.src.Name]
		sums[r.src.Name] = crew.Gauges{Queued: s.Queued + g.Queued, Running: s.Running + g.Running,
			Workers: s.Workers + g.Workers, Blocked: s.Blocked + g.Blocked}
	}
	c.pool.collectGauges(ch, pools)
	c.actor.collectGauges(ch, actors)
}

// counts appends the counters of series s, called name, to ms.
func (f *family) counts(ms []prometheus.Metric, name string, s *series) []prometheus.Metric {
	for i, d := range f.events {
		if d != nil {
			ms = append(ms, prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(s.events[i].Load()), name))
		}
	}
	return ms
}

// collectGauges sends the gauges of each name in sums.
func (f *family) collectGauges(ch chan<- prometheus.Metric, sums map[string]crew.Gauges) {
	for name, g := range sums {
		for i, v := range [4]int{g.Queued, g.Running, g.Workers, g.Blocked} {
			if d := f.gauges[i]; d != nil {
				ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), name)
			}
		}
	}
}

// Track returns the Recorder of source s (crew.Metrics): it is called by
// the constructor of a pool, an actor or a router given
// crew.WithMetrics(c). It returns nil, to record nothing, for a kind of
// source it does not know.
func (c *Collector) Track(s crew.Source) crew.Recorder {
	f := &c.actor
	switch s.Kind {
	case crew.SourcePool:
		f = &c.pool
	case crew.SourceActor, crew.SourceRouter:
	default:
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ser := f.names[s.Name]
	if ser == nil {
		ser = new(series)
		if f == &c.pool {
			ser.queueWait, ser.runTime = newTimings(c.bounds), newTimings(c.bounds)
		}
		f.names[s.Name] = ser
	}
	r := &recorder{c: c, src: s, s: ser}
	if s.Gauges != nil {
		c.live[r] = struct{}{}
	}
	return r
}

// forget stops reading r's gauges.
func (c *Collector) forget(r *recorder) {
	c.mu.Lock()
	delete(c.live, r)
	c.mu.Unlock()
}
