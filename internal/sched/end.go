package sched

// The end of a pool: Shut closes it to new jobs and says when the last job
// ended, Stop stops dispatching once its context ended, Dismiss stops the
// workers; and the jobs the backlog evicted become dead letters, then are
// counted out (evictions).

// Ended counts how the jobs of a pool, or of a batch, ended.
type Ended struct {
	Completed int64 // ran on a worker, failed or not
	Canceled  int64 // skipped because a context was done
	Dropped   int64 // evicted by the backlog mailbox
	Failed    int64 // failed: returned an error, panicked or called runtime.Goexit (see Failure)
	Panicked  int64 // panicked
}

// ended counts a job that ran, failing as f says, or was skipped.
func (c *Ended) ended(skipped bool, f Failure) {
	if skipped {
		c.Canceled++
		return
	}
	c.Completed++
	c.failed(f)
}

// failed counts a failure, if f is one.
func (c *Ended) failed(f Failure) {
	if f != NoFailure {
		c.Failed++
		if f == Panicked {
			c.Panicked++
		}
	}
}

// A Failure is how a job failed, if it did: the pool tells the scheduler
// before the job's end is counted (Worker.Fail, RanInline and Tally), so that a job's
// failure is counted once, with its end, under the lock.
type Failure int8

const (
	NoFailure Failure = iota
	Failed            // returned an error, or called runtime.Goexit
	Panicked          // panicked
)

// RanInline counts, for owner o (and in the pool's totals), a job that ran
// inline, on the goroutine of the job that submitted it: it was never
// held, so its count needs no lock. A pool counts it before it tallies
// the job's failure, if it failed, so that Failed never runs ahead of the
// jobs that ended.
func (s *Scheduler[T, B]) RanInline(o *Owner[T, B]) {
	s.inline.Add(1)
	if o != &s.own { // the pool's own jobs count in the totals alone
		o.inline.Add(1)
	}
}

// Tally counts, for owner o (and in the pool's totals), a failure f that
// no worker's Next counts: a job's that ran inline, or one that ended no
// job (a runtime.Goexit in a dead-letter sink, before the worker's next
// job started).
func (s *Scheduler[T, B]) Tally(o *Owner[T, B], f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done.failed(f)
	if o != &s.own {
		o.done.failed(f)
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
	s.reopen() // closing: the lanes close
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

// evictions hands the jobs the backlog mailbox evicted to Config.OnLost,
// for their dead letters, then counts them out, also if a dead-letter
// sink ends the goroutine (runtime.Goexit): they are gone either way.
// s.mu is not held.
func (s *Scheduler[T, B]) evictions() {
	s.mu.Lock()
	jobs := s.evicted
	s.evicted = nil
	s.mu.Unlock()
	if len(jobs) == 0 {
		return
	}
	lost := make([]Grant[T, B], len(jobs))
	for i, job := range jobs {
		lost[i] = Grant[T, B]{job: job, f: &s.own.flow}
	}
	var now int64
	defer s.lost(len(lost), &now)
	now = s.onLost(lost)
}

// lost counts out n jobs that will never run, once their dead letters
// were delivered; *now is the pool's clock as the pool returned from
// OnLost (WithMetrics), or 0.
func (s *Scheduler[T, B]) lost(n int, now *int64) {
	var a after[T, B]
	s.mu.Lock()
	s.tick(*now)
	s.held -= n
	s.done.Dropped += int64(n)
	s.admit(&a)
	s.feed(&a)
	s.checkDrained()
	s.mu.Unlock()
	s.run(&a)
}
