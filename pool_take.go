package crew

import "time"

// The workers' side of the dispatcher: a worker counts out the job it ended
// and takes its next one in one turn of the lock.

// next gives worker w its next job. It counts out the job w ended since its
// last call, then returns the next job for w: one handed to it, else the
// oldest in the backlog. It skips the jobs dispatched once the pool's
// context is done (w records them). With none left it returns ok == false,
// having marked w idle if park is set: w then waits for its signal, which a
// job handed to it sends. A worker calls it without park after each job,
// and with park (its mailbox's Dequeue) when that finds nothing.
func (d *dispatcher[T]) next(w *worker[T], park bool) (job T, ok bool) {
	for {
		var a after[T]
		job, ok, skip := d.take(w, park, &a)
		if a.any {
			a.run(d)
		}
		if !ok {
			w.streak, w.since = 0, time.Time{}
			return job, false
		}
		if !skip {
			if w.streak++; w.streak == shareEvery {
				w.share()
			}
			return job, true
		}
		w.skip(job)
	}
}

// take is one pass of next.
func (d *dispatcher[T]) take(w *worker[T], park bool, a *after[T]) (job T, ok, skip bool) {
	done := d.seesDone()
	if !d.plain {
		return d.takeAny(w, park, done, a)
	}
	d.lock(done)
	if w.ended {
		d.end(w, a)
	}
	switch {
	case w.own.n > 0:
		job, ok = w.own.pop()
	case d.backlog.n > 0:
		job, ok = d.backlog.pop()
		skip = d.stopped
		if d.backlog.n == 0 && len(d.backlog.buf) > keptRingSlots {
			d.backlog.release()
		}
	case park && !w.dead:
		d.setIdle(w.index)
	}
	d.mu.Unlock()
	return job, ok, skip
}

// takeAny is take for every pool.
func (d *dispatcher[T]) takeAny(w *worker[T], park, done bool, a *after[T]) (job T, ok, skip bool) {
	d.lock(done)
	defer d.mu.Unlock() // also if a mailbox or key function panics
	if w.ended {
		d.end(w, a)
	}
	if job, ok = w.own.pop(); ok {
		// A job handed to w runs whatever happens; one queued at w by its
		// key's pin is w's backlog.
		return job, true, d.pin != nil && d.stopped
	}
	switch {
	case d.pin != nil:
	case d.keys != nil:
		var e prioItem[T]
		if e, ok = d.ready.pop(); ok {
			return e.msg, true, d.stopped
		}
	default: // a backlog mailbox: the other pools are plain
		if job, ok = d.mb.Dequeue(); ok {
			d.admit(a) // room opened in the mailbox
			return job, true, d.stopped
		}
	}
	if park && !w.dead {
		d.setIdle(w.index)
	}
	return job, false, false
}

// end counts out the job w ended, queues the next job of its key in the
// backlog, and hands the room to blocked Submits. d.mu is held.
func (d *dispatcher[T]) end(w *worker[T], a *after[T]) {
	w.ended = false
	if w.skipped {
		w.skipped = false
		w.canceled++
	} else {
		w.handled++
	}
	d.held--
	if d.plain && d.waiting.first == nil && !d.closed {
		return
	}
	if d.keys != nil {
		var zero T
		job := w.last
		w.last = zero
		if next, ok := d.keys.leave(job); ok {
			// Into the backlog, in its order, even if a worker is idle:
			// the caller, w's take, takes the oldest job next, without a
			// worker to wake. (bury, the other caller, feeds the idle.)
			d.ready.push(next)
			d.backlogged++
		}
	}
	if d.waiting.first != nil {
		d.admit(a)
	}
	if d.closed {
		d.checkDrained()
	}
}
