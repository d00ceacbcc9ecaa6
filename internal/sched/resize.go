package sched

import "math"

// Resize makes the pool's workers n, while the pool runs, and moves the
// pool's bound with them (n×Config.PerWorker, see bound). Growing makes
// new workers, which it returns for the pool to start their goroutines:
// each takes jobs once it first calls Next. Shrinking retires the last
// workers: an idle one exits as its Next returns, a busy one once it has
// run the jobs it holds. The pool's workers are then the first n of
// those it had (all of them, if it grew), followed by made. Resize
// reports whether the pool has n workers now: it changes nothing, and
// reports false, once Shut began; it changes nothing, and reports true,
// if the pool has n workers already. now is
// the pool's clock (WithMetrics), or 0. The pool calls Resize from one
// goroutine at a time: only Resize changes the workers.
func (s *Scheduler[T, B]) Resize(n int, now int64) (made []*Worker[T, B], resized bool) {
	s.mu.Lock()
	closed, workers := s.drained != nil, s.workers
	s.mu.Unlock()
	if closed || n == len(workers) {
		return nil, !closed
	}
	// What grows is made before the lock is taken: the new workers, the
	// slices that hold them.
	grown := workers
	var room []uint64
	if n > len(workers) {
		grown = make([]*Worker[T, B], len(workers), n)
		copy(grown, workers)
		for len(grown) < n {
			grown = append(grown, newWorker[T, B](len(grown), s.name))
		}
		room = s.idle.room(n)
	}
	retired := make([]*Worker[T, B], 0, max(len(workers)-n, 0)) // the idle ones, whose channels close
	var a after[T, B]
	s.mu.Lock()
	if s.drained != nil { // Shut began meanwhile: the workers stay as they are
		s.mu.Unlock()
		return nil, false
	}
	if n > len(workers) {
		s.idle.grow(room)
	}
	for i := len(grown) - 1; i >= n; i-- { // retire the last ones, until n are left
		w := grown[i]
		w.retired = true
		if s.idle.has(i) { // it exits once its channel is closed; a busy one, at its next job
			s.removeIdle(i)
			retired = append(retired, w)
		}
	}
	s.workers = grown[:n]
	s.idle.shrunk(n)
	s.limit = bound(n, s.perWorker)
	if s.fair != nil {
		s.fair.resize(n, s.limit)
	}
	s.reopen()
	s.tick(now)
	s.admit(&a)
	made = s.workers[min(len(workers), n):]
	s.mu.Unlock()
	s.run(&a)
	for _, w := range retired {
		close(w.wake)
	}
	return made, true
}

// bound returns the pool's bound for n workers of perWorker jobs each: 0
// for none, and math.MaxInt, which no count of jobs held reaches before
// memory runs out, where n×perWorker would overflow an int (a 32-bit
// platform with a large WithQueueSize, or math.MaxInt on any): the pool
// then has no bound of its own in effect, never a smaller one than asked
// for, and keeps its fast lane.
func bound(n, perWorker int) int {
	if perWorker > math.MaxInt/n {
		return math.MaxInt
	}
	return n * perWorker
}
