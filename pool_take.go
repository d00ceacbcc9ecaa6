package crew

import "time"

// The workers' side of the dispatcher: a worker counts out the job it ended
// and takes its next one in one turn of the lock.

// next gives worker w its next job. It counts out the job w ended since its
// last call, then returns the next job for w: one handed to it, else the
// oldest in the backlog. It skips the jobs dispatched once the pool's
// context (or their batch's) is done (w records them). With none left it
// returns ok == false, having marked w idle if park is set: w then waits
// for its signal, which a job handed to it sends. A worker calls it
// without park after each job, and with park (its mailbox's Dequeue) when
// that finds nothing.
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
	var t task[T]
	switch {
	case w.own.n > 0:
		t, ok = w.own.pop()
	case w.away:
		d.leave(w, a)
	case d.backlog.n > 0 && d.batched.n == 0 && d.ready.len() == 0: // a pool without batches
		t.job, ok = d.backlog.pop()
		skip = d.stopped
		if d.backlog.n == 0 && len(d.backlog.buf) > keptRingSlots {
			d.backlog.release()
		}
	case d.backlog.n > 0 || d.batched.n > 0 || d.ready.len() > 0:
		t, ok = d.popBacklog(), true
		skip = d.stopped || t.b != nil && t.b.done()
	case park && !w.dead:
		d.setIdle(w.index)
	}
	if ok {
		w.batch = t.b
	}
	d.mu.Unlock()
	return t.job, ok, skip
}

// popBacklog removes and returns the oldest job of a plain pool's backlog:
// of the pool's own jobs (backlog), of the batch jobs that may run
// (batched), and of those released by their batch's limit (ready). Batch
// jobs are ordered among themselves by seq, and go before the pool's own
// jobs from their mark on. d.mu is held; one of them has a job.
func (d *dispatcher[T]) popBacklog() task[T] {
	var first *prioItem[queued[T]] // the oldest batch job
	fromReady := false
	if d.batched.n > 0 {
		first = &d.batched.buf[d.batched.head]
	}
	if d.ready.len() > 0 && (first == nil || d.ready.h[0].seq < first.seq) {
		first, fromReady = &d.ready.h[0], true
	}
	if first == nil || d.backlog.n > 0 && d.pushed-uint64(d.backlog.n) < first.msg.mark {
		job, _ := d.backlog.pop() // the pool's job came first
		if d.backlog.n == 0 && len(d.backlog.buf) > keptRingSlots {
			d.backlog.release()
		}
		return task[T]{job: job}
	}
	var e prioItem[queued[T]]
	if fromReady {
		e, _ = d.ready.pop()
	} else {
		e, _ = d.batched.pop()
		if d.batched.n == 0 && len(d.batched.buf) > keptRingSlots {
			d.batched.release()
		}
	}
	return e.msg.task
}

// takeAny is take for every pool.
func (d *dispatcher[T]) takeAny(w *worker[T], park, done bool, a *after[T]) (job T, ok, skip bool) {
	d.lock(done)
	defer d.mu.Unlock() // also if a mailbox or key function panics
	if w.ended {
		d.end(w, a)
	}
	var t task[T]
	if t, ok = w.own.pop(); ok {
		// A job handed to w runs whatever happens; one queued at w by its
		// key's pin is w's backlog.
		return t.job, true, d.pin != nil && d.stopped
	}
	switch {
	case w.away:
		d.leave(w, a)
		return job, false, false
	case d.pin != nil:
	case d.keys != nil:
		var e prioItem[queued[T]]
		if e, ok = d.ready.pop(); ok {
			return e.msg.job, true, d.stopped
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

// leave is take for a worker that takes no job from the backlog: one that
// Resize started and has not joined the pool yet, or one it retired, which
// then exits (see exit). What the worker's last job freed (a job of its key
// or batch, room for a blocked Submit) goes to an idle worker instead.
// d.mu is held.
func (d *dispatcher[T]) leave(w *worker[T], a *after[T]) {
	w.exit = w.retired
	if d.nidle > 0 && d.backlog.n+d.batched.n+d.ready.len() > 0 {
		a.wake(d.takeIdle())
	}
}

// end counts out the job w ended, queues the next job of its key or batch
// in the backlog, and hands the room to blocked Submits. d.mu is held.
func (d *dispatcher[T]) end(w *worker[T], a *after[T]) {
	w.ended = false
	skipped := w.skipped
	if skipped {
		w.skipped = false
		w.canceled++
	} else {
		w.handled++
	}
	d.held--
	if b := w.batch; b != nil {
		w.batch = nil
		d.endBatch(b, skipped, a)
	}
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
			d.ready.push(prioItem[queued[T]]{msg: queued[T]{task: task[T]{job: next.msg}}, seq: next.seq})
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
