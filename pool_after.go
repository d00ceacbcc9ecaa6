package crew

// after is what a critical section leaves for once the lock is released:
// jobs granted to workers (each worker, linked through it, holds its
// grant), blocked Submits to answer (linked through them; their err is
// set), the jobs the backlog mailbox evicted to dead-letter, and, once the
// last worker died, the blocked Submits to refuse with ErrNoRoutee.
type after[T any] struct {
	grants    *worker[T]
	replies   *waiter[task[T]]
	evictions bool             // the backlog mailbox evicted jobs
	noRoutee  *waiter[task[T]] // to refuse with the pool's noWorker
}

// grant leaves g for worker w, which was idle, to receive.
func (a *after[T]) grant(w *worker[T], g grant[T]) {
	w.granted, w.nextGrant = g, a.grants
	a.grants = w
}

// reply leaves w's answer to be sent.
func (a *after[T]) reply(w *waiter[task[T]]) {
	w.next = a.replies
	a.replies = w
}

// run does what the critical section left, for pool p.
func (a *after[T]) run(p *Pool[T]) {
	for w := a.grants; w != nil; {
		next := w.nextGrant
		w.nextGrant = nil
		w.give()
		w = next
	}
	for w := a.replies; w != nil; {
		next := w.next
		w.next = nil
		w.ready <- struct{}{} // its err is set
		w = next
	}
	a.grants, a.replies = nil, nil
	refuse(a.noRoutee, p.noWorker)
	a.noRoutee = nil
	if a.evictions {
		a.evictions = false
		p.evictions()
	}
}
