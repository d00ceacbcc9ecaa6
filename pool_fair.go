package crew

import (
	"strconv"
	"time"
)

// WithFairShare makes a long-lived pool (NewPool, NewGroup, WithContext)
// share its workers fairly between its batches, by the time they run,
// rather than first come, first served. Each batch is a share, the
// batches made WithTenant(key) form one share per key, and the pool's own
// jobs form one share. A freed worker takes the oldest job of the share
// that has received the least worker time per unit of weight (WithWeight)
// while it was backlogged. So a batch that queues 2,000 jobs gets its
// share of the workers, not all of them, and a small batch submitted after
// it overtakes it. A job's cost is its run time: its share is charged its
// recent mean as the job starts, then the job's measured run time once it
// ends, so a share whose jobs are running never looks cheaper than a
// newcomer, and a share of slow jobs gets fewer jobs, not less time.
//
// Admission. A share holding fewer jobs (running or waiting) than the pool
// has workers is light; a new request's share holds none. A light share's
// Submit is let in beyond the pool's bound, up to a job per worker more,
// and while the pool is full, the room a job's end frees goes to the light
// shares' blocked Submits first; a share holding more is let in within the
// bound only. So a small request's Submits, one after another as a
// handler's loop makes them, return at once beside a tenant whose queue
// fills the pool, and its jobs are in the pool, where the fair order puts
// them, when the next worker frees; and a tenant's queue never holds
// another share to less than a job per worker. Among the shares of each
// kind, blocked Submits take turns, w per turn for a share of weight w, so
// that a batch whose Submits block from many goroutines cannot hold the
// others out. A pool WithFairShare holds at most its bound plus a job per
// worker, workers×(2+n) jobs with WithQueueSize(n) (a job's own Submit
// aside, see Pool.Submit): 32 for 8 workers by default. A noisy tenant still takes every idle
// worker: the rule decides what waits in the pool, not what runs.
//
// A share that was quiet goes first: one that gets a job after using less
// than its part of the workers lately (a tenant between its requests, a
// new batch) is credited the run time it left unused, up to the fair
// window per unit of its weight (DefaultFairWindow; WithFairWindow sets
// it). Shares holding credit take freed workers ahead of the shares that
// hold none, the one that came first first, each until it has run its
// credit's worth or has no job left. So a small request beside a tenant
// with a deep backlog runs nearly as soon as alone: a pool does not
// preempt, so its first jobs wait for the running ones to end, about a
// job's length at most. Where every job also waits for a CPU (jobs that
// compute, a busy machine) it gains less over first come, first served;
// the benchmark report's advice "fair share" checks this on your
// machine. Credit is bounded: all shares together hold at most the window
// times the workers; a share the pool knows is credited only what it left unused,
// and new shares (a new batch, a tenant the pool no longer remembers)
// together draw on what one more share of weight 1 would receive. A share
// backlogged all along keeps, over any span of time, at least its
// weight's fraction of the run time the pool gave in it (its weight over
// the weights of the shares with jobs in the span, plus 1), less twice
// the window times the workers and about a job per share: many bursty
// tenants cannot starve it.
//
// Within a share, jobs are dispatched in submission order (and blocked
// Submits served in arrival order); WithLimit, first-error cancellation,
// skips, dead letters, Wait and Stats keep their meaning. The pool reads
// the clock as a job starts and ends, for every job of a share whose jobs
// take 4 µs or more, and for one in 16 of the quicker ones, which are
// charged their share's mean run time (BatchStats.RunTime reports a
// batch's service).
//
// A pool with WithKey, WithConsistentHash or WithMailbox takes no batches:
// its constructor panics if given WithFairShare too.
func WithFairShare() Option {
	return func(o *options) { o.set |= optFairShare; o.fairShare = true }
}

// DefaultFairWindow is the fair window of a pool WithFairShare made
// without WithFairWindow.
const DefaultFairWindow = 20 * time.Millisecond

// WithFairWindow sets the fair window of a pool WithFairShare to d: the
// most run time, per unit of its weight, that a share which used less than
// its part of the workers lately is credited when it gets a job, and so
// runs ahead of the shares that used theirs (see WithFairShare). The
// credit is the run time a share of its weight backlogged all along would
// have received meanwhile, which it did not use, up to d × weight; a new
// share, and a tenant the pool no longer remembers, is owed what it would
// have received since the pool began, up to the same.
// Choose d about as long as the run time of the requests to protect: a
// larger d protects longer requests, and takes more from a backlogged
// share for a while (at most d × the pool's workers at once). With 0, no
// share is credited: one that was idle re-enters behind the others, the
// order of a pool before this option. It panics if d is negative; a pool
// given it without WithFairShare panics too.
func WithFairWindow(d time.Duration) Option {
	if d < 0 {
		panic("crew: WithFairWindow: d must not be negative, got " + d.String())
	}
	return func(o *options) { o.set |= optFairWindow; o.fairWindow = d }
}

// WithTenant puts a batch (Pool.NewBatch, MapBatch, MapSeqBatch,
// NewStreamBatch) of a pool WithFairShare in the share of tenant key: the
// batches of one tenant share its part of the workers, as one. A tenant's
// share lasts while one of its batches has not been waited for, and with a
// fair window (WithFairWindow) a while after, so that the pool tells a
// tenant that sends requests back to back from a quiet one: the pool
// remembers the 1,024 tenants with no batch that had one last. So memory
// grows with the tenants active at once, plus those, not with every tenant
// ever seen. Without it, or with an empty key, a batch is a share of its
// own.
//
// In any pool, the tenant labels the run times of the batch's jobs that
// the pool reports (WithMetrics: see Recorder.Observe). A pool without
// WithFairShare takes it too, and keeps first come, first served: the
// tenant is then that label alone, so that a server can turn fair shares
// off, to compare, and keep its metrics.
func WithTenant(key string) Option {
	return func(o *options) { o.set |= optTenant; o.tenant = key }
}

// WithWeight sets the weight of a batch's share, in a pool WithFairShare:
// among backlogged shares, each receives worker time in proportion to its
// weight (1 by default). For a batch made WithTenant, it sets its tenant's
// share's weight: the weight of the tenant's latest batch applies, 1 if
// it was given none. A pool without WithFairShare takes it and ignores
// it: its batches share the workers first come, first served. It panics
// if w is less than 1.
func WithWeight(w int) Option {
	if w < 1 {
		panic("crew: WithWeight: w must be at least 1, got " + strconv.Itoa(w))
	}
	return func(o *options) { o.set |= optWeight; o.weight = w }
}
