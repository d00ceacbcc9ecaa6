package crew

// A flow is a queue of jobs that a pool dispatches as one: the pool's own
// jobs, a batch's, or a key's (WithKey). Within a flow, jobs are
// dispatched in the order they were queued; a flow with limit > 0 runs at
// most limit of its jobs at once, and is not runnable while it does. Which
// runnable flow's job runs next is the order's choice (see order), or
// in a pool WithFairShare, its shares' (see fairness). The dispatcher's
// lock guards a flow.
type flow[T any] struct {
	q       ring[waitingJob[T]] // jobs waiting, oldest first, each with its number (seq)
	mb      Mailbox[T]          // the pool's backlog of its own (WithMailbox), instead of q
	evicted []T                 // jobs mb evicted (DropOldest), waiting for their dead letters
	running int                 // jobs dispatched and not ended
	limit   int                 // the most jobs running at once, or 0
	at      int                 // 1 + the flow's index in its order, or 0 while it is not there
	batch   *Batch[T]           // the batch whose jobs these are, or nil
	share   *share[T]           // the share the flow belongs to, in a pool WithFairShare, or nil
	key     int                 // WithKey: where the key table keeps the flow's key
	routee  int                 // a keyed router's: the routee its jobs running are at
}

// queued reports the jobs waiting to be dispatched.
func (f *flow[T]) queued() int {
	if f.mb != nil {
		return f.mb.Len()
	}
	return f.q.n
}

// free reports whether a job of the flow may be dispatched now: it is
// under its limit.
func (f *flow[T]) free() bool { return f.limit == 0 || f.running < f.limit }

// runnable reports whether the flow has a job that may be dispatched now.
func (f *flow[T]) runnable() bool { return f.free() && f.queued() > 0 }

// A waitingJob is a job waiting in its flow.
type waitingJob[T any] struct {
	job T
	seq uint64 // its number: an order sorts flows by their oldest job's
	at  int64  // when the pool accepted it (see Pool.clock), or 0
}

// push queues t's job, numbered seq.
func (f *flow[T]) push(t task[T], seq uint64) {
	f.q.push(waitingJob[T]{job: t.job, seq: seq, at: t.at})
	if f.share != nil {
		f.share.queued++
	}
}

// pop removes the oldest job; the flow has one. A ring it drains gives back
// a buffer larger than keptRingSlots.
func (f *flow[T]) pop() task[T] {
	if f.mb != nil {
		job, _ := f.mb.Dequeue()
		return task[T]{job: job, f: f}
	}
	e, _ := f.q.pop()
	if f.share != nil {
		f.share.queued--
	}
	if f.q.n == 0 && len(f.q.buf) > keptRingSlots {
		f.q.release()
	}
	return task[T]{job: e.job, f: f, at: e.at}
}

// front returns the oldest job without removing it; the flow has one (and
// no mailbox).
func (f *flow[T]) front() T { return f.q.buf[f.q.head].job }

// head reports the number of the flow's oldest job: what an order sorts
// flows by. A mailbox orders its own jobs, and is the only flow of its pool.
func (f *flow[T]) head() uint64 {
	if f.mb != nil {
		return 0
	}
	return f.q.buf[f.q.head].seq
}
