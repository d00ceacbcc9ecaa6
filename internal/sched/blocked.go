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

// With fair shares and a window, while a share with jobs holds credit
// and no worker is idle, a full pool keeps room for the shares holding
// credit: a job of a share that holds none is let in only while the pool
// holds fewer than plainBound jobs, the bound less a job per worker (while
// that leaves a job per worker), so that a quiet share's Submits, one
// after another, find the room a job's end freed waiting for them, rather
// than taken by a backlogged share's blocked Submit. (A share holds credit
// only while it has a job: see fairness.idled.)

// plainBound returns the most jobs the pool holds for a share holding no
// credit, with fair shares and a window. s.mu is held.
func (s *Scheduler[T, B]) plainBound() int {
	if s.fair.holders == 0 || s.nidle > 0 {
		return s.limit
	}
	n := len(s.workers)
	return min(s.limit, max(s.limit-n, n))
}

// fairFull reports whether a job of flow f, offered to a pool with fair
// shares, a window and a bound, finds the pool full: for a share that will
// hold credit, at its bound, or with its own Submits or another such
// share's blocked; for one that will hold none, at plainBound or with a
// Submit blocked. s.mu is held.
func (s *Scheduler[T, B]) fairFull(f *flow[T, B]) bool {
	plain := s.held >= s.plainBound() || s.nblocked > 0
	if !plain {
		return false
	}
	if sh := f.share; sh.waiting.Len() == 0 && s.fair.willHold(sh) {
		return s.held >= s.limit || s.fair.ahead.Len() > 0
	}
	return plain
}

// admitBound returns the most jobs the pool holds as it lets blocked
// Submit w in: plainBound for a share holding no credit, with fair shares
// and a window. s.mu is held.
func (s *Scheduler[T, B]) admitBound(w *queue.Waiter[task[T, B]]) int {
	if s.fair != nil && s.fair.window > 0 && !w.Msg.f.share.links.In(&s.fair.ahead) {
		return s.plainBound()
	}
	return s.limit
}
