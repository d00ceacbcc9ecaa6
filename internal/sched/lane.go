package sched

// The fast lane: the scheduler's decisions for a first-come-first-served
// pool (no fair shares, no keys or pins, no backlog mailbox, and so only
// runnable flows of its own and of batches) while nothing unusual is under
// way: no stop seen, Shut not begun, some worker live, and a bound. Then
// no callback of the user's runs under the lock, no job is skipped for the
// pool's end, and the order is consulted only when a batch with a limit
// has a runnable job: with the jobs of the pool's own and of batches
// without a limit alone (the common cases, a pool used as an errgroup or
// a batch per request), Offer and Next decide in O(1), in a few lines of
// their own, and the order's heap is not touched. The functions here are what the
// general ones (offer, place, next) do in that state, with the
// branches that cannot apply left out; the lane is closed, and the general
// ones decide, as soon as one of its conditions fails (see reopen).

// reopen decides whether the fast lane is open, after one of the fields it
// depends on changed. s.mu is held (or s is not shared yet).
func (s *Scheduler[T, B]) reopen() {
	s.lane = s.fair == nil && s.keyed == nil && s.pin == nil && s.own.flow.mb == nil &&
		s.stop == nil && s.drained == nil && s.limit > 0
	s.fairLane = s.fair != nil && s.stop == nil && s.drained == nil && s.limit > 0
}

// laneNext is next in the fast lane, for a worker that is not retired.
// s.mu is held.
func (s *Scheduler[T, B]) laneNext(w *Worker[T, B], ended bool, now int64, a *after[T, B]) step {
	if s.stamp {
		s.tick(now)
	}
	if ended {
		s.countOut(w) // its flow may run another job now
		if s.nblocked > 0 {
			s.admit(a)
		}
	}
	f := s.laneFirst()
	if f == nil {
		w.job = Grant[T, B]{}
		s.addIdle(w.index)
		return park
	}
	w.job = s.laneTake(f, w)
	if s.nidle > 0 {
		s.feed(a) // a limit freed, or a job let in, may have made more runnable
	}
	return runNext
}

// laneFirst is first in the fast lane. s.mu is held.
func (s *Scheduler[T, B]) laneFirst() *flow[T, B] {
	f := s.order.first()
	if s.own.flow.q.Len() > 0 && (f == nil || s.own.flow.q.Front().seq < f.head()) {
		return &s.own.flow
	}
	return f
}

// laneTake is take in the fast lane: it dispatches the oldest job of flow
// f, which is runnable. Of the pool's own flow, it reads the queue alone,
// on a cache line of its own. s.mu is held.
func (s *Scheduler[T, B]) laneTake(q *flow[T, B], w *Worker[T, B]) Grant[T, B] {
	e, _ := q.q.Pop()
	f := e.f // q's, or a fifo batch's in the pool's own queue
	f.waiting--
	skip := noSkip
	if b := f.batch; b != nil && b.seesDone() {
		skip = batchStopped
	}
	s.running++
	if f != &s.own.flow {
		f.running++
		if q == f && (len(s.order.h) > 1 || !f.runnable()) {
			s.order.fix(f) // alone in the order and still runnable, it stays where it is
		}
	}
	if s.stamp {
		w.start = max(e.at, s.now)
	}
	return Grant[T, B]{job: e.job, f: f, at: e.at, skip: skip}
}

// lanePlace is place for a first-come-first-served pool with no pin and
// no backlog mailbox (the pool's own flow, batches' and keys'): it hands t
// to an idle worker if t may run now and nothing runnable waits (workers
// take from the order before they go idle: if one is idle, no job may run
// before t), else queues it, numbered, in its flow, which enters the order
// if it becomes runnable (the pool's own flow stays out of it: see
// first). s.mu is held.
func (s *Scheduler[T, B]) lanePlace(t task[T, B], a *after[T, B]) {
	f := t.f
	if s.nidle > 0 && s.own.flow.q.Len() == 0 && s.order.len() == 0 && f.free() {
		w := s.takeIdle()
		s.countRun(f, 1)
		s.running++
		if s.stamp {
			w.start = max(t.at, s.now)
		}
		a.grant(w, Grant[T, B]{job: t.job, f: f, at: t.at})
		return
	}
	s.seq++
	s.queuedIn++
	f.waiting++
	if f.fifo {
		s.own.flow.q.Push(queued[T, B]{job: t.job, seq: s.seq, at: t.at, f: f})
		return
	}
	f.q.Push(queued[T, B]{job: t.job, seq: s.seq, at: t.at, f: f})
	if f.at == 0 {
		// A flow in its order keeps its place: a job queued behind others
		// changes neither its head nor whether it may run.
		s.order.fix(f)
	}
}
