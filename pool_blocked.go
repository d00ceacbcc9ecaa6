package crew

import "sync"

// The Submits blocked on a full pool: queued with a waiter each, in one
// FIFO list (with WithFairShare, one per share, taking turns), and answered
// once the lock is released: let in as room opens (admit), refused when
// their batch or the pool closes (extract, detachBlocked), or withdrawn
// when their context ends.

// enlist queues a blocked Submit with a waiter from waiters. d.mu is held.
func (d *dispatcher[T]) enlist(t task[T], waiters *sync.Pool) (verdict, *waiter[task[T]], error) {
	w, _ := waiters.Get().(*waiter[task[T]])
	if w == nil {
		return noWaiter, nil, nil
	}
	w.msg = t
	d.nblocked++
	if d.fair != nil {
		d.fair.block(w, d.number())
	} else {
		d.waiting.push(w)
	}
	return waiting, w, nil
}

// admit hands free room to the blocked Submits, oldest first. d.mu is held.
func (d *dispatcher[T]) admit(a *after[T]) {
	for w := d.nextBlocked(); w != nil; w = d.nextBlocked() {
		if d.limit > 0 && d.held >= d.limit || d.stop != nil || d.live == 0 {
			return // once the context is done, refuseAll answers them; bury, once no worker is left
		}
		if d.stamp {
			w.msg.at = max(w.msg.at, d.now) // accepted now
		}
		var err error
		if b := w.msg.f.batch; b != nil && b.seesDone() {
			err = b.ctxErr() // its batch failed or ended while it waited: it would be skipped
		} else if err = d.placeBlocked(w.msg, a); err == errWouldBlock {
			return
		}
		d.admitted(w)
		w.msg, w.err = task[T]{}, err
		a.reply(w)
	}
}

// withdraw takes w off the list of blocked Submits, and reports whether it
// was still there: if not, its outcome is on its way to w.ready.
func (d *dispatcher[T]) withdraw(w *waiter[task[T]]) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !w.queued {
		return false
	}
	d.unblock(w)
	w.msg = task[T]{}
	return true
}

// blocked reports whether a Submit is blocked. d.mu is held.
func (d *dispatcher[T]) blocked() bool {
	if d.fair != nil {
		return d.fair.blocked.first != nil
	}
	return d.waiting.first != nil
}

// nextBlocked returns the blocked Submit that the room a job frees goes
// to: the oldest, or with WithFairShare, the oldest of the share whose
// turn it is. d.mu is held.
func (d *dispatcher[T]) nextBlocked() *waiter[task[T]] {
	if d.fair != nil {
		return d.fair.nextBlocked()
	}
	return d.waiting.first
}

// unblock takes w, which is queued, off the blocked Submits. d.mu is held.
func (d *dispatcher[T]) unblock(w *waiter[task[T]]) {
	d.nblocked--
	if d.fair != nil {
		d.fair.unblock(w)
	} else {
		d.waiting.remove(w)
	}
}

// detachBlocked takes every blocked Submit off, to be refused once the
// lock is released. d.mu is held.
func (d *dispatcher[T]) detachBlocked() *waiter[task[T]] {
	d.nblocked = 0
	if d.fair != nil {
		return d.fair.detach()
	}
	return d.waiting.detach()
}

// extract takes the blocked Submits of batch b off the list, to be
// refused once the lock is released. d.mu is held.
func (d *dispatcher[T]) extract(b *Batch[T]) *waiter[task[T]] {
	var list *waiter[task[T]]
	if d.fair != nil {
		list = d.fair.extract(&b.flow)
	} else {
		list = d.waiting.extract(func(w *waiter[task[T]]) bool { return w.msg.f == &b.flow })
	}
	for w := list; w != nil; w = w.next {
		d.nblocked--
	}
	return list
}

// refuse answers a detached list of blocked Submits with err.
func refuse[T any](list *waiter[T], err error) {
	for w := list; w != nil; {
		next := w.next
		var zero T
		w.msg, w.prev, w.next = zero, nil, nil
		w.answer(err)
		w = next
	}
}

// admitted takes w, the Submit nextBlocked returned, off the blocked
// Submits: with WithFairShare, its share's turn may end. d.mu is held.
func (d *dispatcher[T]) admitted(w *waiter[task[T]]) {
	d.nblocked--
	if d.fair != nil {
		d.fair.admitted(w)
	} else {
		d.waiting.remove(w)
	}
}
