package crew

import "strconv"

// WithFairShare makes a long-lived pool (NewPool, NewGroup, WithContext)
// share its workers fairly between its batches, by the time they run,
// rather than first come, first served. Each batch is a share, the
// batches made WithTenant(key) form one share per key, and the pool's own
// jobs form one share. A freed worker takes the oldest job of the share
// that has received the least worker time per unit of weight (WithWeight)
// while it was backlogged. While the pool is full, the room a job's end
// frees goes to the shares with a blocked Submit in turn, w Submits per
// turn for a share of weight w, so that a batch whose Submits block from
// many goroutines cannot hold the others out. So a batch that queues
// 2,000 jobs gets its share of the workers, not all of them, and a small
// batch submitted after it overtakes it. A job's cost is its run
// time: its share is charged its recent mean as the job starts, then the
// job's measured run time once it ends, so a share whose jobs are running
// never looks cheaper than a newcomer, and a share of slow jobs gets fewer
// jobs, not less time. A share that was idle banks no credit: it
// re-enters at the pool's current virtual time. Within a share, jobs are
// dispatched in submission order (and blocked Submits served in arrival
// order); WithLimit, first-error cancellation, skips, dead letters, Wait
// and Stats keep their meaning. The pool reads the clock as a job starts
// and ends, for every job of a share whose jobs take 4 µs or more, and for
// one in 16 of the quicker ones, which are charged their share's mean run
// time (BatchStats.RunTime reports a batch's service).
//
// A pool with WithKey, WithConsistentHash or WithMailbox takes no batches:
// its constructor panics if given WithFairShare too.
func WithFairShare() Option {
	return func(o *options) { o.set |= optFairShare; o.fairShare = true }
}

// WithTenant puts a batch (Pool.NewBatch, MapBatch) of a pool WithFairShare
// in the share of tenant key: the batches of one tenant share its part of
// the workers, as one. A tenant's share lasts while one of its batches has
// not been waited for, so memory grows with the tenants active at once, not
// with every tenant ever seen. Without it, or with an empty key, a batch
// is a share of its own.
func WithTenant(key string) Option {
	return func(o *options) { o.set |= optTenant; o.tenant = key }
}

// WithWeight sets the weight of a batch's share, in a pool WithFairShare:
// among backlogged shares, each receives worker time in proportion to its
// weight (1 by default). For a batch made WithTenant, it sets its tenant's
// share's weight: the weight of the tenant's latest batch applies, 1 if
// it was given none. It panics if w is less than 1.
func WithWeight(w int) Option {
	if w < 1 {
		panic("crew: WithWeight: w must be at least 1, got " + strconv.Itoa(w))
	}
	return func(o *options) { o.set |= optWeight; o.weight = w }
}
