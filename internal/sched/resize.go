package sched

// Resize makes n of the pool's workers live, while the pool runs, and
// moves the pool's bound with them (n×Config.PerWorker, see bound). Growing makes
// new workers, which it returns for the pool to start their goroutines:
// each takes jobs once it first calls Next. Shrinking retires the last
// live workers: an idle one exits as its Next returns, a busy one once it
// has run the jobs it holds. Workers that died are taken out as they are
// passed over. The pool's workers are then the first kept of those it had,
// followed by made. Resize reports !changed, and changes nothing, once
// Shut began or if n workers are live already. now is the pool's clock
// (WithMetrics), or 0. The pool calls Resize from one goroutine at a time.
func (s *Scheduler[T, B]) Resize(n int, now int64) (kept int, made []*Worker[T, B], changed bool) {
	for {
		if kept, made, done, changed := s.resize(n, now); done {
			return kept, made, changed
		}
		// a worker died while resize made the new ones: again
	}
}

// resize is one attempt of Resize: it reports !done, having changed
// nothing, if a worker died while it made the new ones.
func (s *Scheduler[T, B]) resize(n int, now int64) (kept int, made []*Worker[T, B], done, changed bool) {
	s.mu.Lock()
	closed, live, workers := s.drained != nil, s.live, s.workers
	s.mu.Unlock()
	if closed || n == live {
		return 0, nil, true, false
	}
	// What grows is made before the lock is taken: the new workers, the
	// slices that hold them.
	grown := workers
	var room []uint64
	if n > live {
		grown = make([]*Worker[T, B], len(workers), len(workers)+n-live)
		copy(grown, workers)
		for range n - live {
			grown = append(grown, newWorker[T, B](len(grown)))
		}
		room = s.idle.room(len(grown))
	}
	retired := make([]*Worker[T, B], 0, max(live-n, 0)) // the idle ones, whose channels close
	var a after[T, B]
	s.mu.Lock()
	switch {
	case s.drained != nil: // Shut began meanwhile: the workers stay as they are
		s.mu.Unlock()
		return 0, nil, true, false
	case s.live != live: // a worker died meanwhile
		s.mu.Unlock()
		return 0, nil, false, false
	}
	if n > live {
		s.idle.grow(room)
	}
	s.workers = grown
	s.live += len(grown) - len(workers)
	// Retire live workers from the end until n are live, taking out the
	// dead ones met on the way.
	for i := len(s.workers) - 1; i >= 0 && s.live > n; i-- {
		w := s.workers[i]
		if !w.dead {
			w.retired = true
			s.live--
			if s.idle.has(i) { // it exits once its channel is closed; a busy one, at its next job
				s.removeIdle(i)
				retired = append(retired, w)
			}
		}
		s.workers = s.workers[:i]
	}
	s.idle.shrunk(len(s.workers))
	s.limit = bound(n, s.perWorker)
	if s.fair != nil {
		s.fair.resize(n)
	}
	s.reopen()
	s.tick(now)
	s.admit(&a)
	kept = min(len(workers), len(s.workers))
	made = s.workers[kept:]
	s.mu.Unlock()
	s.run(&a)
	for _, w := range retired {
		close(w.wake)
	}
	return kept, made, true, true
}
