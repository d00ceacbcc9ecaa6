package sched

import "github.com/crewlib/crew/internal/queue"

// The lines of Submits blocked on a full pool with fair shares: one per
// share, the shares taking turns (weighted round robin), the light ones
// (see light) ahead of the others, and let in beyond the bound (see
// Scheduler.fairFull).

// light reports whether share s holds fewer jobs (running, or waiting in
// its flows) than the pool has workers.
func (fq *fairness[T, B]) light(s *share[T, B]) bool { return s.running+s.queued < fq.workers }

// lineOf returns the line share s, which has a blocked Submit, belongs in
// by the jobs it holds.
func (fq *fairness[T, B]) lineOf(s *share[T, B]) *queue.List[share[T, B]] {
	if fq.light(s) {
		return &fq.ahead
	}
	return &fq.blocked
}

// block puts w, a Submit blocked on a full pool, in line: its share joins
// its line (see lineOf), last, if it was not in one.
func (fq *fairness[T, B]) block(w *queue.Waiter[task[T, B]], seq uint64) {
	s := w.Msg.f.share
	fq.wake(s, seq)
	if s.waiting.Len() == 0 {
		s.turns = s.weight
		fq.lineOf(s).PushBack(&s.links)
	}
	s.waiting.PushBack(&w.Links)
}

// nextBlocked returns the blocked Submit that the room a job frees goes to
// next, or nil if there is none: the oldest of the share whose turn it is,
// among the light shares first. A share ahead that is no longer light (a
// job's own Submit went beyond the bound) joins the others first.
func (fq *fairness[T, B]) nextBlocked() *queue.Waiter[task[T, B]] {
	for s := fq.ahead.Front(); s != nil; s = fq.ahead.Front() {
		if fq.light(s) {
			return s.waiting.Front()
		}
		fq.requeue(s, &fq.blocked)
	}
	if s := fq.blocked.Front(); s != nil {
		return s.waiting.Front()
	}
	return nil
}

// requeue moves share s, which has a blocked Submit, to the back of line
// l, with a new turn.
func (fq *fairness[T, B]) requeue(s *share[T, B], l *queue.List[share[T, B]]) {
	fq.line(s).Remove(&s.links)
	s.turns = s.weight
	l.PushBack(&s.links)
}

// lightened is called as a job of share s ends (or is skipped): if s has a
// blocked Submit and became light, it moves ahead.
func (fq *fairness[T, B]) lightened(s *share[T, B]) {
	if s.waiting.Len() > 0 && s.links.In(&fq.blocked) && fq.light(s) {
		fq.requeue(s, &fq.ahead)
	}
}

// line returns the list of blocked shares that s, which has a blocked
// Submit, is in.
func (fq *fairness[T, B]) line(s *share[T, B]) *queue.List[share[T, B]] {
	if s.links.In(&fq.ahead) {
		return &fq.ahead
	}
	return &fq.blocked
}

// admitted takes w, the Submit nextBlocked returned, whose job the pool
// now holds, out of its share's line: its share's turn ends after weight
// of them, and its place ahead once it is no longer light.
func (fq *fairness[T, B]) admitted(w *queue.Waiter[task[T, B]]) {
	s := w.Msg.f.share
	s.waiting.Remove(&w.Links)
	l := fq.line(s)
	switch s.turns--; {
	case s.waiting.Len() == 0:
		l.Remove(&s.links)
	case l == &fq.ahead && !fq.light(s):
		fq.requeue(s, &fq.blocked)
	case s.turns == 0:
		fq.requeue(s, l)
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
