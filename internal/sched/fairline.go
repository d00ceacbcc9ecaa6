package sched

import "github.com/crewlib/crew/internal/queue"

// The lines of Submits blocked on a full pool with fair shares: one per
// share, the shares taking turns (weighted round robin), those holding
// credit ahead of the others (see fairness).

// block puts w, a Submit blocked on a full pool, in line: its share joins
// the blocked ones, last, if it was not among them (ahead of them, if it
// holds credit).
func (fq *fairness[T, B]) block(w *queue.Waiter[task[T, B]], seq uint64) {
	s := w.Msg.f.share
	fq.wake(s, seq)
	if s.waiting.Len() == 0 {
		s.turns = s.weight
		if fq.credited(s) {
			fq.ahead.PushBack(&s.links)
		} else {
			fq.blocked.PushBack(&s.links)
		}
	}
	s.waiting.PushBack(&w.Links)
}

// nextBlocked returns the blocked Submit that the room a job frees goes to
// next, or nil if there is none: the oldest of the share whose turn it is.
func (fq *fairness[T, B]) nextBlocked() *queue.Waiter[task[T, B]] {
	s := fq.ahead.Front()
	if s == nil {
		s = fq.blocked.Front()
	}
	if s != nil {
		return s.waiting.Front()
	}
	return nil
}

// line returns the list of blocked shares that s, which has a blocked
// Submit, is in.
func (fq *fairness[T, B]) line(s *share[T, B]) *queue.List[share[T, B]] {
	if s.links.In(&fq.ahead) {
		return &fq.ahead
	}
	return &fq.blocked
}

// admitted takes w, the Submit nextBlocked returned, out of its share's
// line: its share's turn ends after weight of them, and its place ahead
// once it has admitted as much as its credit pays for.
func (fq *fairness[T, B]) admitted(w *queue.Waiter[task[T, B]]) {
	s := w.Msg.f.share
	s.waiting.Remove(&w.Links)
	l := fq.line(s)
	switch s.turns--; {
	case s.waiting.Len() == 0:
		l.Remove(&s.links)
	case l == &fq.ahead && !fq.credited(s):
		s.turns = s.weight
		l.Remove(&s.links)
		fq.blocked.PushBack(&s.links)
	case s.turns == 0:
		s.turns = s.weight
		l.Remove(&s.links)
		l.PushBack(&s.links)
	}
}

// unblock takes w, a Submit that gave up, out of its share's line.
func (fq *fairness[T, B]) unblock(w *queue.Waiter[task[T, B]]) {
	s := w.Msg.f.share
	s.waiting.Remove(&w.Links)
	if s.waiting.Len() == 0 {
		fq.line(s).Remove(&s.links)
	}
	fq.idled(s)
}

// extract takes the blocked Submits of flow f out of its share's line and
// returns them.
func (fq *fairness[T, B]) extract(f *flow[T, B]) queue.Chain[queue.Waiter[task[T, B]]] {
	s := f.share
	c := s.waiting.Extract(func(w *queue.Waiter[task[T, B]]) bool { return w.Msg.f == f })
	if s.waiting.Len() == 0 && s.links.Listed() {
		fq.line(s).Remove(&s.links)
	}
	fq.idled(s)
	return c
}

// detach takes every blocked Submit out of line, and returns them. It
// costs O(Submits blocked): the pool is closing.
func (fq *fairness[T, B]) detach() queue.Chain[queue.Waiter[task[T, B]]] {
	var all queue.Chain[queue.Waiter[task[T, B]]]
	for _, l := range []*queue.List[share[T, B]]{&fq.ahead, &fq.blocked} {
		for s := l.Front(); s != nil; s = l.Front() {
			c := s.waiting.TakeAll()
			all.Append(&c)
			l.Remove(&s.links)
		}
	}
	return all
}

// eachBlocked calls f for each share with a blocked Submit.
func (fq *fairness[T, B]) eachBlocked(f func(*share[T, B])) {
	fq.ahead.Each(f)
	fq.blocked.Each(f)
}
