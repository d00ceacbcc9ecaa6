package sched

// The end of a pool: Shut closes it to new jobs and says when the last job
// ended, Stop stops dispatching once its context ended, Dismiss stops the
// workers; and Lost counts out the jobs the backlog evicted, once they
// became dead letters.

// Ended counts how the jobs of a pool, or of a batch, ended.
type Ended struct {
	Completed int64 // ran, failed or not
	Canceled  int64 // skipped because a context was done
	Dropped   int64 // evicted by the backlog mailbox
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
// every worker is idle then, or about to be, for no job is held.
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

// Lost counts out the jobs the backlog mailbox evicted (see Evicted), once
// their dead letters were delivered. now is the pool's clock
// (WithMetrics), or 0.
func (s *Scheduler[T, B]) Lost(jobs []Grant[T, B], now int64) {
	var a after[T, B]
	s.mu.Lock()
	s.tick(now)
	s.held -= len(jobs)
	s.done.Dropped += int64(len(jobs))
	s.admit(&a)
	s.feed(&a)
	s.checkDrained()
	s.mu.Unlock()
	s.run(&a)
}
