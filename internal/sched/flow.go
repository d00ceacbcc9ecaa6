package sched

import (
	"github.com/crewlib/crew/internal/queue"
)

// A flow is a queue of jobs that the scheduler dispatches as one: the
// pool's own jobs, a batch's, or a key's (WithKey). Within a flow, jobs are
// dispatched in the order they were queued; a flow with limit > 0 runs at
// most limit of its jobs at once, and is not runnable while it does. Which
// runnable flow's job runs next is the order's choice (see Scheduler.first).
// The scheduler's lock guards a flow.
type flow[T, B any] struct {
	q       queue.Ring[queued[T]] // jobs waiting, oldest first, each with its number
	running int                   // jobs dispatched and not ended; not counted for the pool's own flow (see countRun)
	limit   int                   // the most jobs running at once, or 0
	at      int                   // 1 + the flow's index in its order's heap, or 0 while it is not there
	mb      Mailbox[T]            // the pool's backlog of its own (WithMailbox), instead of q
	batch   *Owner[T, B]          // the batch whose jobs these are, or nil
	owner   B                     // whose jobs these are (see Grant.Owner): the pool's (Config.Own), a batch's, the pool's for a key's
	share   *share[T, B]          // the share the flow belongs to, with fair shares, or nil
	key     int                   // WithKey: the key's slot in the index
}

// A queued is a job waiting in its flow.
type queued[T any] struct {
	job T
	seq uint64 // its number: an order sorts flows by their oldest job's
	at  int64  // when the pool accepted it (see Config.Stamp), or 0
}

// A task is a job on its way into the scheduler, with its flow.
type task[T, B any] struct {
	job T
	f   *flow[T, B]
	at  int64
}

// queued reports the jobs waiting to be dispatched.
func (f *flow[T, B]) queued() int {
	if f.mb != nil {
		return f.mb.Len()
	}
	return f.q.Len()
}

// free reports whether a job of the flow may be dispatched now: it is
// under its limit.
func (f *flow[T, B]) free() bool { return f.limit == 0 || f.running < f.limit }

// runnable reports whether the flow has a job that may be dispatched now.
func (f *flow[T, B]) runnable() bool { return f.free() && f.queued() > 0 }

// push queues t's job, numbered seq.
func (f *flow[T, B]) push(t task[T, B], seq uint64) {
	f.q.Push(queued[T]{job: t.job, seq: seq, at: t.at})
	if f.share != nil {
		f.share.queued++
	}
}

// pop removes the oldest job; the flow has one.
func (f *flow[T, B]) pop() (job T, at int64) {
	if f.mb != nil {
		job, _ = f.mb.Dequeue()
		return job, 0
	}
	e, _ := f.q.Pop()
	if f.share != nil {
		f.share.queued--
	}
	return e.job, e.at
}

// head reports the number of the flow's oldest job: what an order sorts
// flows by. A mailbox orders its own jobs, and is the only flow of its
// pool.
func (f *flow[T, B]) head() uint64 {
	if f.mb != nil {
		return 0
	}
	return f.q.Front().seq
}

// releaseKey forgets f, a key's flow with no job left, and its key. The
// flow stays in its slot for the next key given it, with its buffer if
// small (a burst's goes back to be recycled). s.mu is held.
func (s *Scheduler[T, B]) releaseKey(f *flow[T, B]) {
	s.keyed.Release(f.key)
	f.q.Trim()
}
