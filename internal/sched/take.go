package sched

// A worker's turn beyond the fast lane: counting out the job it ended, in
// any pool (fair shares, keys, pins, a backlog mailbox, a stop seen), and
// taking the next job the order picks; and feeding idle workers the jobs
// that became runnable.

// nextSlow is Next beyond the fast lane's common case. s.mu is held, and
// released.
func (s *Scheduler[T, B]) nextSlow(w *Worker[T, B], ended bool, ran, now int64, stop error) (*Grant[T, B], bool) {
	var a after[T, B]
	if s.lane && stop == nil && !w.retired {
		w.pending = s.laneNext(w, ended, now, &a)
		s.mu.Unlock()
	} else if s.fairLane && stop == nil && !w.retired {
		w.pending = s.fairNext(w, ended, ran, now, &a)
		s.mu.Unlock()
	} else {
		w.pending = s.next(w, ended, ran, now, stop, &a)
	}
	s.run(&a) // may deliver dead letters: a sink may call runtime.Goexit, and a new goroutine Resumes w
	return s.nextStep(w, w.pending)
}

// count counts out the job worker w ended, which ran or was skipped, and
// returns its flow. s.mu is held.
func (s *Scheduler[T, B]) count(w *Worker[T, B]) *flow[T, B] {
	g := &w.job
	f := g.f
	s.countRun(f, -1)
	s.running--
	s.held--
	skipped := g.skip != noSkip
	if s.done.ended(skipped, w.failure); !skipped {
		w.handled++
	}
	switch {
	case f.batch != nil:
		f.batch.done.ended(skipped, w.failure)
	case skipped:
		s.ownSkips++
	}
	w.failure = NoFailure
	return f
}

// next is Next under the lock, which it releases, also if a backlog
// mailbox panics.
func (s *Scheduler[T, B]) next(w *Worker[T, B], ended bool, ran, now int64, stop error, a *after[T, B]) step {
	defer s.mu.Unlock()
	s.noteStop(stop)
	s.tick(now)
	if ended {
		s.end(w, ran, a)
	}
	w.job = Grant[T, B]{}
	switch {
	case w.pinned.Len() > 0:
		w.job = s.pinned(w)
		return runNext
	case w.retired:
		s.feed(a) // what its last job freed goes to an idle worker
		return retire
	}
	if f := s.first(); f != nil {
		w.job = s.take(f, w, a)
		s.feed(a)
		return runNext
	}
	s.addIdle(w.index)
	return park
}

// first returns the runnable flow whose job is dispatched next, or nil if
// none is runnable: the pool's own flow, kept out of the order, if its
// oldest job came before the order's first. s.mu is held.
func (s *Scheduler[T, B]) first() *flow[T, B] {
	if s.fair != nil {
		return s.fair.first()
	}
	f := s.order.first()
	if s.own.flow.queued() > 0 && (f == nil || s.own.flow.head() < f.head()) {
		return &s.own.flow
	}
	return f
}

// fix puts f where it belongs in the order after its jobs or its running
// count changed. s.mu is held.
func (s *Scheduler[T, B]) fix(f *flow[T, B]) {
	switch {
	case f.share != nil:
		s.fair.fix(f)
	case f != &s.own.flow:
		s.order.fix(f)
	}
}

// take dispatches the oldest job of flow f, which is runnable, to worker
// w. s.mu is held.
func (s *Scheduler[T, B]) take(f *flow[T, B], w *Worker[T, B], a *after[T, B]) Grant[T, B] {
	t := f.pop()
	g := s.dispatched(t, s.skipping(t.f), w)
	s.fix(f)
	if f.mb != nil && s.nblocked > 0 {
		s.admit(a) // room opened in the mailbox
	}
	return g
}

// dispatched counts t out of its flow's waiting jobs and into the running
// ones, and returns its grant to worker w, to be skipped if skip says so.
// With fair shares, a job that runs is charged to its share, which w
// keeps for the job's end; a skipped one costs its share nothing. s.mu is
// held.
func (s *Scheduler[T, B]) dispatched(t task[T, B], skip skipCause, w *Worker[T, B]) Grant[T, B] {
	s.countRun(t.f, 1)
	s.running++
	if sh := t.f.share; sh != nil && skip == noSkip {
		w.charged, w.timed = s.fair.charge(sh)
		w.timed = w.timed || s.stamp // the worker times every job anyway
	}
	if s.stamp {
		w.start = max(t.at, s.now)
	}
	return Grant[T, B]{job: t.job, f: t.f, at: t.at, skip: skip}
}

// skipping returns why a job of f dispatched now is skipped, or noSkip:
// the end of its batch's context or the pool's, once a dispatch saw it.
// s.mu is held.
func (s *Scheduler[T, B]) skipping(f *flow[T, B]) skipCause {
	if b := f.batch; b != nil && b.seesDone() {
		return batchStopped
	}
	return s.stopped()
}

// stopped returns poolStopped once a dispatch saw the pool's context end,
// else noSkip. s.mu is held.
func (s *Scheduler[T, B]) stopped() skipCause {
	if s.stop != nil {
		return poolStopped
	}
	return noSkip
}

// pinned dispatches the oldest job queued at worker w. s.mu is held.
func (s *Scheduler[T, B]) pinned(w *Worker[T, B]) Grant[T, B] {
	t, _ := w.pinned.Pop()
	return s.dispatched(t, s.stopped(), w)
}

// feed grants runnable jobs to idle workers, while both last: after a job
// ended, Resize, or an eviction's count made jobs runnable. s.mu is held.
func (s *Scheduler[T, B]) feed(a *after[T, B]) {
	for s.nidle > 0 {
		f := s.first()
		if f == nil {
			return
		}
		w := s.takeIdle()
		a.grant(w, s.take(f, w, a))
	}
}

// up reports whether worker i takes jobs: every worker does (a runtime.Goexit
// ends a worker's goroutine, not the worker), for keys.Pin.
func up(int) bool { return true }

// end counts out the job worker w ended, which ran (for ran ns, if w
// timed it) or was skipped: its flow may run another (a batch's limit, a
// key), and its room goes to the blocked Submits. s.mu is held.
func (s *Scheduler[T, B]) end(w *Worker[T, B], ran int64, a *after[T, B]) {
	g := &w.job
	sh := g.f.share
	if sh != nil && g.skip == noSkip {
		ran = s.fair.settle(sh, w.charged, ran, w.timed)
		if b := g.f.batch; b != nil {
			b.ran += ran
		}
	}
	s.countOut(w)
	if sh != nil {
		s.fair.lightened(sh)
	}
	if s.nblocked > 0 {
		s.admit(a)
	}
	s.checkDrained()
}

// countOut counts out the job worker w ended, puts its flow where it
// belongs, and, if it was the last job of a batch whose WaitBatch began,
// forgets the batch and lets WaitBatch return. s.mu is held.
func (s *Scheduler[T, B]) countOut(w *Worker[T, B]) {
	f := s.count(w)
	s.settle(f)
	if b := f.batch; b != nil {
		s.release(b)
	}
}

// settle puts flow f where it belongs once one of its jobs left its
// running ones: in the order if it may run another now (a limit), out of
// the key table if it has none (a key). s.mu is held.
func (s *Scheduler[T, B]) settle(f *flow[T, B]) {
	switch {
	case f.limit == 0: // no change: its runnable state does not depend on running
	case s.keyed != nil && f.running == 0 && f.q.Len() == 0:
		s.releaseKey(f)
	default:
		s.fix(f)
	}
}

// countRun adds n to the jobs of flow f that run, unless f is the pool's own
// flow, which has no limit and no key: its count would serve nothing, and
// the scheduler's running counts every flow's jobs. s.mu is held.
func (s *Scheduler[T, B]) countRun(f *flow[T, B], n int) {
	if f != &s.own.flow {
		f.running += n
	}
}

// noteStop records stop, the cause of the pool context's end that the
// caller saw before it took the lock (nil if it saw none). s.mu is held.
func (s *Scheduler[T, B]) noteStop(stop error) {
	if stop != nil && s.stop == nil {
		s.stop = stop
		s.reopen()
	}
}

// tick records now, a reading of the pool's clock (WithMetrics; 0 if
// none), unless a later one was recorded. s.mu is held.
func (s *Scheduler[T, B]) tick(now int64) { s.now = max(s.now, now) }

// number numbers a job queued now, or a Submit blocked: later ones have
// higher numbers. s.mu is held.
func (s *Scheduler[T, B]) number() uint64 {
	s.seq++
	return s.seq
}
