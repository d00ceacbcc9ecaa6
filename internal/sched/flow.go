package sched

import (
	"github.com/crewlib/crew/internal/queue"
)

// A flow is a queue of jobs that the scheduler dispatches as one: the
// pool's own jobs, a batch's, or a key's (WithKey). Within a flow, jobs are
// dispatched in the order they were queued; a flow with limit > 0 runs at
// most limit of its jobs at once, and is not runnable while it does. Which
// runnable flow's job runs next is the order's choice (see Scheduler.first).
//
// In a first-come-first-served pool, a batch without a limit has nothing
// to order its jobs by but their numbers, as the pool's own jobs: its jobs
// queue in the pool's own flow's queue (fifo), each with its flow, and
// take the pool's own road, never the order's. The scheduler's lock
// guards a flow.
type flow[T, B any] struct {
	q       queue.Ring[queued[T, B]] // jobs waiting in this flow's queue, oldest first, each with its number and its own flow
	waiting int                      // the flow's jobs waiting to be dispatched, in its queue or (fifo) the pool's own; read for a batch's only (held, BatchCounts)
	running int                      // jobs dispatched and not ended; not counted for the pool's own flow (see countRun)
	limit   int                      // the most jobs running at once, or 0
	at      int                      // 1 + the flow's index in its order's heap, or 0 while it is not there
	fifo    bool                     // its jobs queue in the pool's own flow's queue (see above)
	mb      Mailbox[T]               // the pool's backlog of its own (WithMailbox), instead of q
	batch   *Owner[T, B]             // the batch whose jobs these are, or nil
	owner   B                        // whose jobs these are (see Grant.Owner): the pool's (Config.Own), a batch's, the pool's for a key's
	share   *share[T, B]             // the share the flow belongs to, with fair shares, or nil
	key     int                      // WithKey: the key's slot in the index
}

// A queued is a job waiting in a flow's queue.
type queued[T, B any] struct {
	job T
	seq uint64      // its number: an order sorts flows by their oldest job's
	at  int64       // when the pool accepted it (see Config.Stamp), or 0
	f   *flow[T, B] // its flow: the queue's, or (fifo) a batch's in the pool's own
}

// A task is a job on its way into the scheduler, with its flow.
type task[T, B any] struct {
	job T
	f   *flow[T, B]
	at  int64
}

// queued reports the jobs waiting in the flow's queue: its own, and in the
// pool's own flow's, those of the fifo batches too.
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
	f.q.Push(queued[T, B]{job: t.job, seq: seq, at: t.at, f: f})
	f.waiting++
	if f.share != nil {
		f.share.queued++
	}
}

// pop removes the oldest job of the flow's queue, which has one, and
// returns it with its own flow.
func (f *flow[T, B]) pop() task[T, B] {
	if f.mb != nil {
		job, _ := f.mb.Dequeue()
		return task[T, B]{job: job, f: f}
	}
	e, _ := f.q.Pop()
	e.f.waiting--
	if f.share != nil {
		f.share.queued--
	}
	return task[T, B]{job: e.job, f: e.f, at: e.at}
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
