package crew

import (
	"strconv"
	"time"
)

// Metrics is where the pools, actors and routers given WithMetrics(m)
// report what happens in them, as it happens: a small interface of crew's
// own, so that crew depends on no metrics library. The nested modules
// promcrew (a Prometheus collector) and otelcrew (OpenTelemetry
// instruments) implement it; so can a few lines of yours.
//
// Each constructor given WithMetrics(m) calls m.Track once, before it
// starts anything, and reports to the Recorder that Track returns until it
// calls the Recorder's Close. Counts (Recorder.Add) and durations
// (Recorder.Observe) are pushed as they happen; gauges are pulled, when
// the metrics are read, through Source.Gauges, so that they cost nothing
// per job.
//
// Metrics are labelled by the source's name: give each pool, actor and
// router a name with WithName, for the default names ("pool-7") are
// numbered in creation order and change from run to run. Sources may share
// a name (a Map per request, say): a Metrics should then add up their
// counts and gauges, and forget a source once it is closed.
type Metrics interface {
	// Track is called once by the constructor of each pool, actor or
	// router given WithMetrics, and returns the Recorder it reports to;
	// nil, to report nothing. It may be called from any goroutine.
	Track(s Source) Recorder
}

// A Recorder receives the events of one source, a pool, an actor or a
// router. Its methods are called from many goroutines at once (the ones
// that submit or tell, the workers, the actors) and on their way: they must
// be safe for concurrent use and quick, and must not block, panic, or call
// back into the source. crew calls none of them while it holds a lock of
// its own, so a slow Recorder slows only the goroutine that calls it.
//
// Every count and duration of a job's end (Completed, Failed, Panicked,
// Skipped, Dropped, RunTime) is reported before the end is counted: before
// the pool's, or its batch's, Wait that returns after it. A Submit counts
// its job (Submitted) as it returns, after the job may have ended. So the
// counts are exact once Wait has returned and so have the Submits, and in
// any case once Close is called.
type Recorder interface {
	// Add counts n (at least 1) more events of kind e.
	Add(e Event, n int)

	// Observe records one duration of kind t. For a RunTime, tenant is
	// the job's batch's tenant (WithTenant), in a pool WithFairShare or
	// not; "" for the pool's own jobs and for the batches without one. It
	// is "" for everything else.
	Observe(t Timing, d time.Duration, tenant string)

	// Close says that the source has ended: a pool's Wait has seen every
	// job end (and every Submit let in before it closed the pool has
	// counted its job: a Submit that returns as Wait runs may call Close
	// itself, just after Wait returns), an actor has exited, every routee
	// of a router has. No call to a pool's Recorder follows. For an actor
	// or a router, Adds may follow: Add(EventDropped, 1) for a message
	// told after its end, a dead letter; and Add(EventSubmitted, 1) for a
	// Tell that its end raced, whose message was accepted and then became
	// a dead letter (counted in Dropped too). Source.Gauges still works,
	// and reads the ended source's levels (0 workers).
	Close()
}

// A Source is a pool, an actor or a router that reports to a Metrics.
type Source struct {
	Kind SourceKind
	Name string // the name given by WithName, or the default one

	// Gauges reads the source's gauges now: safe from any goroutine, in
	// O(1) for an actor and a pool (under the pool's lock, briefly), in
	// O(routees) for a router, without allocating.
	Gauges func() Gauges
}

// SourceKind is what kind of source reports: a pool, an actor or a router.
type SourceKind uint8

const (
	SourcePool   SourceKind = iota + 1 // NewPool, NewGroup, WithContext or Map, its batches' jobs included
	SourceActor                        // Spawn
	SourceRouter                       // SpawnRouter: its routees together
)

// String returns "pool", "actor" or "router".
func (k SourceKind) String() string {
	switch k {
	case SourcePool:
		return "pool"
	case SourceActor:
		return "actor"
	case SourceRouter:
		return "router"
	}
	return "SourceKind(" + strconv.Itoa(int(k)) + ")"
}

// Gauges are a source's levels at one instant (see Source.Gauges).
type Gauges struct {
	Queued  int // a pool's jobs waiting to be dispatched (its backlog); the messages in an actor's or a router's mailboxes
	Running int // a pool's jobs running (those run inline aside); 1 while an actor is busy (Ref.Busy: it handles a message, or checks its mailbox for one), else 0; a router's busy routees
	Workers int // a pool's live workers; 1 until an actor exits, then 0; a router's routees that have not exited
	Blocked int // the Submits blocked on a full pool; 0 for actors and routers
}

// An Event is what a Recorder counts (see Recorder.Add):
//
//   - EventSubmitted: a job accepted, or a message told;
//   - EventCompleted: a job that ran, or a message handled, failed or not;
//   - EventFailed: a job or handler that returned an error, panicked or
//     called runtime.Goexit;
//   - EventPanicked: one that panicked (in EventFailed too);
//   - EventSkipped: a pool's job skipped, its pool's or batch's context
//     done when it would have been dispatched;
//   - EventDropped: a dead letter for another reason;
//   - EventReplaced: a worker's or an actor's goroutine that a
//     runtime.Goexit ended, replaced by a new one at once;
//   - EventGrown, EventShrunk, EventBackedOff: a pool WithAdaptiveSize
//     changed its size, and why (the Workers gauge reports the size).
//
// Their constants below say more.
type Event uint8

// The events. For a pool, once Wait has returned, Submitted = Completed +
// Skipped + Dropped, and each count equals its field of Pool.Stats
// (Submitted, Completed, Failed, Panicked, Canceled, Dropped): both count
// every job of the pool and of its batches, those a job ran inline
// included. For an actor or a router, Submitted counts the
// messages told (accepted by Tell or Broadcast; a keyed router's, as its
// Tell accepts them), Completed those handled, and Dropped its dead
// letters, a refused Tell's included: those were never Submitted, so
// Submitted - Completed - Dropped can be below 0.
const (
	EventSubmitted Event = iota + 1 // a job accepted by Submit or TrySubmit, a batch's included, or a message told
	EventCompleted                  // a job that ran, or a message handled, failed or not
	EventFailed                     // a job or a handler that returned an error, panicked or called runtime.Goexit
	EventPanicked                   // a job or a handler that panicked (counted in Failed too)
	EventSkipped                    // a pool's job skipped: its pool's or batch's context was done when it would have been dispatched (PoolStats.Canceled counts the same jobs)
	EventDropped                    // a pool's job or an actor's message that became a dead letter for another reason than a skip
	EventReplaced                   // a pool's worker or an actor whose goroutine a runtime.Goexit ended, and a new goroutine took on
	EventGrown                      // a pool WithAdaptiveSize grew: run time at its no-load level, the pool busy, jobs waiting
	EventShrunk                     // a pool WithAdaptiveSize shrank: run time above its no-load level, or a growth that did not raise throughput undone
	EventBackedOff                  // a pool WithAdaptiveSize backed off: more than 1 job in 10 of a window failed
)

// String returns the event's name: "submitted", "completed", "failed",
// "panicked", "skipped", "dropped", "replaced", "grown", "shrunk" or
// "backed_off".
func (e Event) String() string {
	if e >= EventSubmitted && e <= EventBackedOff {
		return eventNames[e-EventSubmitted]
	}
	return "Event(" + strconv.Itoa(int(e)) + ")"
}

var eventNames = [...]string{"submitted", "completed", "failed", "panicked", "skipped", "dropped", "replaced", "grown", "shrunk", "backed_off"}

// A Timing is what kind of duration a Recorder observes (see
// Recorder.Observe):
//
//   - QueueWait: how long a pool's job waited, from its acceptance to its
//     dispatch;
//   - RunTime: how long it ran, from its dispatch.
//
// Their constants below say more.
type Timing uint8

const (
	// QueueWait is how long a pool's job waited, from its acceptance
	// (Submit returning nil, or a blocked Submit let in) to its dispatch:
	// one observation per job that starts, 0 for a job handed to an idle
	// worker as it was submitted, and for a job run inline. A pool with a
	// backlog of your own (WithMailbox) observes none: its mailbox keeps
	// no time.
	QueueWait Timing = iota + 1
	// RunTime is how long a pool's job ran, failed or not: one
	// observation per job that ran, from its dispatch to its end. A pool
	// reads the clock twice per job, as Submit accepts it and as it ends:
	// a worker that takes its next job as it counts one out dates the
	// next job's dispatch with the reading it made as the last one ended,
	// and a job handed to an idle worker is dated by its Submit's. So a
	// RunTime includes what the worker did between the two, its turn at
	// the pool's lock and the Recorder's calls for the job before
	// (nanoseconds to microseconds), or an idle worker's wake-up (a
	// microsecond or more when the CPUs are busy): negligible for jobs of
	// a millisecond, a part of a job of a microsecond. A pool with a
	// backlog of your own reads the clock as each job starts instead.
	RunTime
)

// String returns "queue_wait" or "run_time".
func (t Timing) String() string {
	switch t {
	case QueueWait:
		return "queue_wait"
	case RunTime:
		return "run_time"
	}
	return "Timing(" + strconv.Itoa(int(t)) + ")"
}

// WithMetrics reports what happens in a pool (NewPool, NewGroup,
// WithContext, Map: its batches' jobs included), an actor (Spawn) or a
// router's routees (SpawnRouter) to m, as it happens: see Metrics for how,
// and Event and Timing for what. Without it, nothing is measured and
// nothing is paid. With it, a pool reads the clock three times per job (as
// it accepts it, and as its worker starts and ends it) and makes four
// calls to the Recorder; an actor makes two calls per message and reads
// no clock. A clock read costs 20-50 ns, so a pool's no-op job costs more
// with it (the README's Performance section has the figures); a job that
// does anything costs about the same.
func WithMetrics(m Metrics) Option {
	if m == nil {
		panic("crew: WithMetrics: nil Metrics")
	}
	return func(o *options) { o.set |= optMetrics; o.metrics = m }
}
