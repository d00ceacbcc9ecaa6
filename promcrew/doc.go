// Package promcrew exports what crew's pools, actors and routers report
// (crew.WithMetrics) to Prometheus: a Collector is a prometheus.Collector
// and a crew.Metrics at once.
//
//	c := promcrew.New()
//	prometheus.MustRegister(c)
//	p := crew.NewPool(8, resize, crew.WithName("resize"), crew.WithMetrics(c))
//	http.Handle("/metrics", promhttp.Handler())
//
// Pools are labelled pool="name", actors and routers actor="name" (a
// router under its own name, its routees together): give each a name with
// crew.WithName, for the default names are numbered in creation order.
// Sources that share a name add up. Counts and histograms are kept from
// the events as they happen; gauges are read from the live sources as
// Prometheus scrapes, so that they cost nothing per job, and a source's
// gauges go away once it has ended, while its counts stay.
//
// # Families
//
// Pools, labelled pool:
//
//	crew_pool_jobs_submitted_total       counter    jobs accepted by Submit or TrySubmit, a batch's included
//	crew_pool_jobs_completed_total       counter    jobs that ran, failed or not
//	crew_pool_jobs_failed_total          counter    jobs that returned an error, panicked or called runtime.Goexit
//	crew_pool_jobs_panicked_total        counter    jobs that panicked (counted in failed too)
//	crew_pool_jobs_skipped_total         counter    jobs skipped: their pool's or batch's context was done
//	crew_pool_jobs_dropped_total         counter    jobs that became dead letters for another reason than a skip
//	crew_pool_workers_replaced_total     counter    workers whose goroutine a runtime.Goexit ended, taken on by a new one
//	crew_pool_size_grown_total           counter    times a pool WithAdaptiveSize grew
//	crew_pool_size_shrunk_total          counter    times it shrank: congestion, or a growth undone
//	crew_pool_size_backed_off_total      counter    times it backed off: more than 1 job in 10 failed
//	crew_pool_queued_jobs                gauge      jobs waiting to be dispatched (the backlog)
//	crew_pool_running_jobs               gauge      jobs running
//	crew_pool_workers                    gauge      live workers
//	crew_pool_blocked_submits            gauge      Submits blocked on a full pool
//	crew_pool_queue_wait_seconds         histogram  from a job's acceptance to its dispatch
//	crew_pool_run_seconds                histogram  how long a job ran, failed or not
//	crew_pool_tenant_run_seconds_total   counter    a pool's run time by tenant (label tenant)
//
// The tenant counter has a series per tenant given with crew.WithTenant; the
// run time of the jobs without one (the pool's own, and the batches without
// a tenant) is in crew_pool_run_seconds_sum only, so that a tenant's share
// of a pool's run time is its counter's rate over that sum's rate.
//
// Actors and routers, labelled actor:
//
//	crew_actor_messages_told_total       counter    messages accepted by Tell or Broadcast
//	crew_actor_messages_handled_total    counter    messages handled, failed or not
//	crew_actor_messages_failed_total     counter    handlers that returned an error, panicked or called runtime.Goexit
//	crew_actor_messages_panicked_total   counter    handlers that panicked (counted in failed too)
//	crew_actor_dead_letters_total        counter    messages that became dead letters, a refused Tell's included
//	crew_actor_goroutines_replaced_total counter    actors whose goroutine a runtime.Goexit ended, taken on by a new one
//	crew_actor_mailbox_depth             gauge      messages waiting in the mailboxes
//	crew_actor_busy                      gauge      messages being handled
//	crew_actor_live                      gauge      actors that have not exited
//
// # Cost
//
// A Recorder finds its series once, as its source starts. The histograms
// are promcrew's own, exported as const histograms as Prometheus scrapes:
// a job that succeeds is six atomic adds (submitted, completed, and a
// bucket and a sum per histogram), a failed job or a tenant's one more,
// with no lock, no compare-and-swap loop and no allocation. See the README
// for the figure per no-op job.
package promcrew
