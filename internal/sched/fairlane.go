package sched

// The fair lane: the scheduler's decisions for a pool with fair shares
// while nothing unusual is under way (no stop seen, Shut not begun, a
// bound), as the fast lane is for a first-come-first-served pool (see
// lane.go): a Submit that finds room and no Submit blocked, and a worker's
// end-and-take, decide here with the branches of offer and next that
// cannot apply left out. The fairness bookkeeping is the same on both
// roads (fairPlace, end, take).

// fairPlace is place for a pool with fair shares: it hands t to an idle
// worker if no job is runnable and t may run (workers take from the order
// before they go idle: if one is idle, no job may run before t), else
// queues it, numbered, in its flow, which enters its share's order if it
// becomes runnable. Either way t's share is woken (see fairness.wake): a
// job that never waits backlogs its share too, for an instant. s.mu is
// held.
func (s *Scheduler[T, B]) fairPlace(t task[T, B], a *after[T, B]) {
	f, fq := t.f, s.fair
	seq := s.number()
	fq.wake(f.share, seq)
	if s.nidle > 0 && fq.runnable.len() == 0 && f.free() {
		w := s.takeIdle()
		a.grant(w, s.dispatched(t, noSkip, w))
		return
	}
	f.push(t, seq)
	s.queuedIn++
	if f.at == 0 {
		// A flow in its order keeps its place: a job queued behind others
		// changes neither its head nor whether it may run.
		fq.fix(f)
	}
}

// fairOffer is Offer in the fair lane, for a job of b, which is neither
// closed nor done, on a pool holding fewer jobs than its bound, with no
// Submit blocked: the pool takes it. s.mu is held, and released.
func (s *Scheduler[T, B]) fairOffer(job T, b *Owner[T, B], at int64) {
	if f := &b.flow; f.limit == 0 && f.q.Len() > 0 {
		// What fairPlace does for a job queued behind its flow's: the
		// flow, runnable, keeps its place in its share's order, and its
		// share, which has a job waiting, in the fair order (wake does
		// nothing); no idle worker may take the job before the flow's.
		s.seq++
		f.q.Push(queued[T, B]{job: job, seq: s.seq, at: at, f: f})
		f.waiting++
		f.share.queued++
		s.queuedIn++
		s.held++
		s.mu.Unlock()
		return
	}
	var a after[T, B]
	s.fairPlace(task[T, B]{job: job, f: &b.flow, at: at}, &a)
	s.held++
	s.mu.Unlock()
	s.run(&a)
}

// fairNext is next in the fair lane, for a worker that is not retired.
// s.mu is held.
func (s *Scheduler[T, B]) fairNext(w *Worker[T, B], ended bool, ran, now int64, a *after[T, B]) step {
	if s.stamp {
		s.tick(now)
	}
	if ended {
		s.end(w, ran, a)
	}
	f := s.fair.first()
	if f == nil {
		w.job = Grant[T, B]{}
		s.addIdle(w.index)
		return park
	}
	w.job = s.take(f, w, a)
	if s.nidle > 0 {
		s.feed(a)
	}
	return runNext
}
