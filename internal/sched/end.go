package sched

// The end of a pool: Shut closes it to new jobs and says when the last job
// ended, Stop stops dispatching once its context ended, Dismiss stops the
// workers; Bury takes out a worker that runtime.Goexit ended, and Lost
// counts out the jobs that became dead letters.

// Ended counts how the jobs of a pool, or of a batch, ended.
type Ended struct {
	Completed int64 // ran, failed or not
	Canceled  int64 // skipped because a context was done
	Dropped   int64 // evicted by the backlog mailbox, or left with a worker that died
}

// ended counts a job that ran, or was skipped.
func (c *Ended) ended(skipped bool) {
	if skipped {
		c.Canceled++
	} else {
		c.Completed++
	}
}

// Shut closes the pool to new jobs but its jobs' own (Offer then returns
// Shut), refuses the blocked Submits with err, and returns a channel closed
// once no job is held. A later call refuses nothing and returns the same
// channel.
func (s *Scheduler[T, B]) Shut(err error) <-chan struct{} {
	drained := make(chan struct{}) // made before the lock, unused by a later call
	s.mu.Lock()
	if s.drained != nil {
		drained = s.drained
		s.mu.Unlock()
		return drained
	}
	s.drained = drained
	s.lane = false // closing: what reopen would decide
	blocked := s.nblocked > 0
	var r Refusals[T, B]
	if blocked {
		r = s.detachBlocked()
	}
	s.checkDrained()
	s.mu.Unlock()
	if blocked {
		r.Refuse(err)
	}
	return drained
}

// isDrained reports whether Shut began and no job is held since. s.mu is
// held.
func (s *Scheduler[T, B]) isDrained() bool {
	select {
	case <-s.drained:
		return true
	default:
		return false
	}
}

// checkDrained closes drained once Shut began and no job is held. s.mu is
// held.
func (s *Scheduler[T, B]) checkDrained() {
	if s.held == 0 && s.drained != nil && !s.isDrained() {
		close(s.drained)
	}
}

// Stop records cause as the end of the pool's context, unless a dispatch
// saw it end first: from now on every dispatch skips its job, and Offer
// refuses (Stopped). It takes the blocked Submits out of line, for the
// caller to refuse once it canceled the context: so no dispatch runs a
// job after a job could see the context end.
func (s *Scheduler[T, B]) Stop(cause error) Refusals[T, B] {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noteStop(cause)
	return s.detachBlocked()
}

// Dismiss closes every worker's channel, once Shut's channel is closed:
// every worker is idle then, or about to be, for no job is held, or dead.
// Each exits as Next finds its channel closed.
func (s *Scheduler[T, B]) Dismiss() {
	s.mu.Lock()
	workers := s.workers
	s.mu.Unlock()
	for _, w := range workers {
		close(w.wake)
	}
}

// SkippedOwn reports whether a job of the pool's own was skipped.
func (s *Scheduler[T, B]) SkippedOwn() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ownSkips > 0
}

// Evicted returns the jobs the backlog mailbox evicted since the last
// call, for their dead letters (see Config.OnEvict), as grants: then Lost
// counts them out.
func (s *Scheduler[T, B]) Evicted() []Grant[T, B] {
	s.mu.Lock()
	jobs := s.evicted
	s.evicted = nil
	s.mu.Unlock()
	lost := make([]Grant[T, B], len(jobs))
	for i, job := range jobs {
		lost[i] = Grant[T, B]{job: job, f: &s.own}
	}
	return lost
}

// Bury takes w, whose goroutine runtime.Goexit ended, out of the pool,
// counting out the job it held: as ended if it started (and ran for ran
// ns, if w timed it), else as lost. now is the pool's clock (WithMetrics),
// or 0.
// The jobs left with w are returned, to become dead letters (then Lost
// counts them out): its job if it had not started, those queued at w
// and, if w was the last worker, every job not dispatched; the blocked
// Submits are then refused with Config.NoWorker.
func (s *Scheduler[T, B]) Bury(w *Worker[T, B], started bool, ran, now int64) []Grant[T, B] {
	var a after[T, B]
	s.mu.Lock()
	lost := s.bury(w, started, ran, now, &a)
	s.mu.Unlock()
	s.run(&a)
	return lost
}

func (s *Scheduler[T, B]) bury(w *Worker[T, B], started bool, ran, now int64, a *after[T, B]) (lost []Grant[T, B]) {
	s.tick(now)
	w.dead = true
	if !w.retired { // a retired worker was counted out by Resize, and left the idle set
		s.live--
		s.reopen()
		if s.idle.has(w.index) { // it went idle, then died delivering dead letters
			s.removeIdle(w.index)
		}
	}
	g := w.job
	switch f := g.f; {
	case started:
		s.end(w, ran, a)
	case f != nil: // dispatched to w, not started: out of the running jobs, into the lost
		s.running--
		if f.share != nil && g.skip == noSkip {
			s.fair.unrun(f.share, w.charged)
		}
		if f.batch == nil { // a batch's stays in its flow until its dead letter (see Lost)
			s.countRun(f, -1)
			s.settle(f)
		}
		lost = append(lost, g)
	}
	w.job = Grant[T, B]{}
	for w.pinned.Len() > 0 {
		t, _ := w.pinned.Pop()
		lost = append(lost, Grant[T, B]{job: t.job, f: t.f, at: t.at})
	}
	w.queued.Store(0)
	if s.live > 0 {
		s.feed(a)
		return lost
	}
	// No job will be dispatched: take every one out of its flow, those
	// behind a limit or a key that a retired worker still runs too.
	drain := func(f *flow[T, B]) {
		for n := f.queued(); n > 0; n-- {
			job, at := f.pop()
			lost = append(lost, Grant[T, B]{job: job, f: f, at: at})
			if f.batch != nil {
				f.running++ // its batch's WaitBatch waits for its dead letter too (see Lost)
			}
		}
		s.fix(f)
	}
	drain(&s.own)
	s.batches.Each(func(b *Batch[T, B]) { drain(&b.flow) })
	if s.keyed != nil {
		s.keyed.Each(func(f *flow[T, B]) {
			if drain(f); f.running == 0 {
				s.releaseKey(f) // only key flows: the pool's own is no key's
			}
		})
	}
	a.noRoutee = s.detachBlocked()
	return lost
}

// Lost counts out the jobs that became dead letters, once they were
// delivered: evicted by the backlog mailbox, or left with a dead worker
// (Bury). now is the pool's clock (WithMetrics), or 0.
func (s *Scheduler[T, B]) Lost(jobs []Grant[T, B], now int64) {
	var a after[T, B]
	s.mu.Lock()
	s.tick(now)
	s.held -= len(jobs)
	s.done.Dropped += int64(len(jobs))
	for _, g := range jobs {
		if b := g.f.batch; b != nil {
			g.f.running-- // it was counted in its flow until its dead letter (see bury)
			s.fix(g.f)
			b.lost()
		}
	}
	s.admit(&a)
	s.feed(&a)
	s.checkDrained()
	s.mu.Unlock()
	s.run(&a)
}
