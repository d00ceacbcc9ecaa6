package sched

import "github.com/crewlib/crew/internal/queue"

// The Submits blocked on a full pool: in line with a waiter each, in one
// FIFO list (with fair shares, one per share, taking turns), and answered
// once the lock is released: let in as room opens (admit), refused when
// their batch or the pool closes (extract, detachBlocked), or withdrawn
// when their context ends (Withdraw).

// enlist puts the Submit of t in line, with a waiter from s.free; with
// none at hand it returns noWaiter. s.mu is held.
func (s *Scheduler[T, B]) enlist(t task[T, B]) (Verdict, *queue.Waiter[task[T, B]], error) {
	w := s.free.Take()
	if w == nil {
		return noWaiter, nil, nil
	}
	w.Msg = t
	s.nblocked++
	if s.fair != nil {
		s.fair.block(w, s.number())
	} else {
		s.blocked.PushBack(&w.Links)
	}
	return Waiting, w, nil
}

// admit hands free room to the blocked Submits, oldest first. s.mu is
// held.
func (s *Scheduler[T, B]) admit(a *after[T, B]) {
	for w := s.nextBlocked(); w != nil; w = s.nextBlocked() {
		if s.limit > 0 && s.held >= s.admitBound(w) || s.stop != nil {
			return // once the context is done, Stop refuses them
		}
		if s.stamp {
			w.Msg.at = max(w.Msg.at, s.now) // accepted now
		}
		var err error
		if b := w.Msg.f.batch; b != nil && b.seesDone() {
			err = b.ctxErr() // its batch failed or ended while it waited: it would be skipped
		} else if err = s.placeBlocked(w.Msg, a); err == errWouldBlock {
			return
		}
		s.admitted(w)
		w.Msg, w.Err = task[T, B]{}, err
		a.reply(w)
	}
}

// nextBlocked returns the blocked Submit that the room a job frees goes
// to: the oldest, or with fair shares, the oldest of the share whose turn
// it is. s.mu is held.
func (s *Scheduler[T, B]) nextBlocked() *queue.Waiter[task[T, B]] {
	if s.fair != nil {
		return s.fair.nextBlocked()
	}
	return s.blocked.Front()
}

// admitted takes w, the Submit nextBlocked returned, out of line: with
// fair shares, its share's turn may end. s.mu is held.
func (s *Scheduler[T, B]) admitted(w *queue.Waiter[task[T, B]]) {
	s.nblocked--
	if s.fair != nil {
		s.fair.admitted(w)
	} else {
		s.blocked.Remove(&w.Links)
	}
}

// unblock takes w, which is in line, out. s.mu is held.
func (s *Scheduler[T, B]) unblock(w *queue.Waiter[task[T, B]]) {
	s.nblocked--
	if s.fair != nil {
		s.fair.unblock(w)
	} else {
		s.blocked.Remove(&w.Links)
	}
}

// detachBlocked takes every blocked Submit out of line, to be refused
// once the lock is released. s.mu is held.
func (s *Scheduler[T, B]) detachBlocked() Refusals[T, B] {
	s.nblocked = 0
	if s.fair != nil {
		return Refusals[T, B]{s.fair.detach()}
	}
	return Refusals[T, B]{s.blocked.TakeAll()}
}

// extract takes the blocked Submits of batch b out of line, to be
// refused once the lock is released. s.mu is held.
func (s *Scheduler[T, B]) extract(b *Owner[T, B]) Refusals[T, B] {
	var r Refusals[T, B]
	if s.nblocked == 0 {
		return r
	}
	f := &b.flow
	if s.fair != nil {
		r.c = s.fair.extract(f)
	} else {
		r.c = s.blocked.Extract(func(w *queue.Waiter[task[T, B]]) bool { return w.Msg.f == f })
	}
	s.nblocked -= r.c.Len()
	return r
}

// With fair shares and a bound, a share holding fewer jobs than the pool
// has workers (light: see fairness.light) is let in beyond the bound, up
// to a job per worker more (fairness.most), and its blocked Submits go
// before the others'; a share holding more waits for room within the
// bound, its blocked Submits behind every light share's. So a new
// request's Submits, one after another, find room at once beside a
// tenant whose queue fills the pool, and its jobs are in the pool, where
// the fair order puts them, when the next worker frees; and a share is
// never held to less than a job per worker by others' queues.

// fairFull reports whether a Submit of share sh finds a pool with fair
// shares and a bound full: for a light share, at the bound and the room
// beside it, or with a light share's Submit (its own too) blocked; for
// another, at the bound, or with any Submit blocked. s.mu is held.
func (s *Scheduler[T, B]) fairFull(sh *share[T, B]) bool {
	if s.fair.light(sh) {
		return s.held >= s.fair.most || s.fair.ahead.Len() > 0 || sh.waiting.Len() > 0
	}
	return s.held >= s.limit || s.nblocked > 0
}

// admitBound returns the most jobs the pool holds as it lets blocked
// Submit w in: with fair shares, beyond the bound for a light share's.
// s.mu is held.
func (s *Scheduler[T, B]) admitBound(w *queue.Waiter[task[T, B]]) int {
	if s.fair != nil && s.fair.light(w.Msg.f.share) {
		return s.fair.most
	}
	return s.limit
}
