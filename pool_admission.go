package crew

import "context"

// Admission and the drain protocol: the Submits blocked on a full pool wait
// in a FIFO list, and take the room a job's end frees, oldest first, before
// any new Submit can (admit); Wait closes the pool, refusing them, and
// waits for drained, which closes once no job is held (close,
// checkDrained); the end of the pool's context refuses them too
// (refuseAll); a worker that dies is taken out, the last one dropping every
// job held (bury, deadLetters). The happens-before these give is stated
// once, on the dispatcher.

// enlist queues a Submit that may wait behind the blocked Submits. d.mu is
// held.
func (d *dispatcher[T]) enlist(mode offerMode, t task[T]) (verdict, *waiter[task[T]], error) {
	if mode != mayWait {
		return full, nil, nil
	}
	w := d.waiters.Get().(*waiter[task[T]])
	w.msg = t
	d.waiting.push(w)
	return waiting, w, nil
}

// withdraw takes w off the list of blocked Submits, and reports whether it
// was still there: if not, its outcome is on its way to w.ready.
func (d *dispatcher[T]) withdraw(w *waiter[task[T]]) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !w.queued {
		return false
	}
	d.waiting.remove(w)
	w.msg = task[T]{}
	return true
}

// admit hands free room to the blocked Submits, oldest first. d.mu is held.
func (d *dispatcher[T]) admit(a *after[T]) {
	for w := d.waiting.first; w != nil; w = d.waiting.first {
		if d.limit > 0 && d.held >= d.limit || d.stopped || d.live == 0 {
			return // once the context is done, refuseAll answers them; bury, once no worker is left
		}
		if b := w.msg.b; b != nil && b.done() {
			// Its batch failed or ended while it waited: it would be skipped.
			d.waiting.remove(w)
			w.msg, w.err = task[T]{}, b.ctx.Err()
			a.reply(w)
			continue
		}
		var err error
		var seq uint64
		if d.keys != nil || w.msg.b != nil {
			seq = d.number()
		}
		if d.keys == nil || d.keys.enter(w.msg.job, seq) {
			if err = d.place(w.msg, seq, a); err == errWouldBlock {
				return
			}
		}
		d.waiting.remove(w)
		if err == nil {
			d.held++
		}
		w.msg, w.err = task[T]{}, err
		a.reply(w)
	}
}

// checkDrained closes drained once Wait began and no job is held.
func (d *dispatcher[T]) checkDrained() {
	if d.closed && d.held == 0 && !d.isDrained {
		d.isDrained = true
		close(d.drained)
	}
}

// refuseAll answers every blocked Submit with the pool context's error,
// once that context is done; context.AfterFunc runs it.
func (d *dispatcher[T]) refuseAll() {
	defer close(d.refused)
	d.lock(true)
	list := d.waiting.detach()
	d.mu.Unlock()
	refuse(list, d.ctx.Err())
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

// close closes the pool to new jobs (Wait) and refuses the blocked Submits.
func (d *dispatcher[T]) close() {
	d.mu.Lock()
	d.closed = true
	list := d.waiting.detach()
	d.checkDrained()
	d.mu.Unlock()
	refuse(list, ErrPoolClosed) // their jobs are new: refuse them
}

// bury takes a worker that died (its job called runtime.Goexit) out of the
// pool and returns the jobs left with it, to become dead letters: those
// queued at it, and, if it was the last worker, every job held, whose
// blocked Submits it answers with ErrNoRoutee. It returns nil when w was
// stopped by Wait or retired by Resize, with nothing left.
func (d *dispatcher[T]) bury(w *worker[T]) []task[T] {
	var a after[T]
	rest := d.buryLocked(w, &a)
	a.run(d)
	return rest
}

func (d *dispatcher[T]) buryLocked(w *worker[T], a *after[T]) []task[T] {
	d.mu.Lock()
	defer d.mu.Unlock()
	if w.dead {
		return nil
	}
	w.dead = true
	if !w.retired { // a retired worker was counted out, and its bit cleared, by Resize
		d.live--
		if d.isIdle(w.index) {
			d.unidle(w.index) // stopped by Wait, or idle when the last worker died
		}
	}
	if w.ended {
		d.end(w, a) // admits no blocked Submit once live == 0
		// Wake idle workers for what end queued: they take it from the
		// ready heap themselves, in seq order, skipping it if stopped.
		for k := d.ready.len(); k > 0 && d.nidle > 0; k-- {
			a.wake(d.takeIdle())
		}
	}
	var rest []task[T]
	for t, ok := w.own.pop(); ok; t, ok = w.own.pop() {
		rest = append(rest, t)
	}
	if d.live > 0 {
		return rest
	}
	if d.keys != nil {
		for _, job := range d.keys.drain() {
			rest = append(rest, task[T]{job: job})
		}
	}
	for e, ok := d.ready.pop(); ok; e, ok = d.ready.pop() {
		if d.keys != nil {
			d.keys.leave(e.msg.job) // its key's queue was drained: this frees the key
		}
		rest = append(rest, e.msg.task)
	}
	for job, ok := d.backlog.pop(); ok; job, ok = d.backlog.pop() {
		rest = append(rest, task[T]{job: job})
	}
	for e, ok := d.batched.pop(); ok; e, ok = d.batched.pop() {
		rest = append(rest, e.msg.task)
	}
	for b := d.batches.first; b != nil; b = b.next {
		if b.queue == nil {
			continue
		}
		for e, ok := b.queue.pop(); ok; e, ok = b.queue.pop() {
			d.overLimit--
			rest = append(rest, e.msg.task)
		}
	}
	if d.mb != nil {
		for _, job := range d.mb.Close() {
			rest = append(rest, task[T]{job: job})
		}
	}
	list := d.waiting.detach()
	a.refuseNoRoutee(list)
	return rest
}

// deadLetters delivers the dead letters of jobs that will never run, then
// counts them out.
func (d *dispatcher[T]) deadLetters(tasks []task[T], target string, reason error) {
	if len(tasks) == 0 {
		return
	}
	for _, t := range tasks {
		d.letter(t, target, reason)
	}
	var a after[T]
	d.mu.Lock()
	d.dropped += int64(len(tasks))
	d.held -= len(tasks)
	for _, t := range tasks {
		if t.b != nil {
			t.b.dropped++
			t.b.release(a.reply)
		}
	}
	d.admit(&a)
	d.checkDrained()
	d.mu.Unlock()
	a.run(d)
}

// after is what a critical section leaves for once the lock is released:
// workers to wake, blocked Submits to answer (their err is set), evicted
// jobs to dead-letter, a list of blocked Submits to refuse with
// ErrNoRoutee. A section fills at most two of each slot; any more are
// served at once.
type after[T any] struct {
	wakes    [2]*worker[T]
	replies  [2]*waiter[task[T]]
	noRoutee *waiter[task[T]] // to refuse with the pool's noWorker
	drops    bool             // d.evicted has jobs
	any      bool             // something to do
}

func (a *after[T]) wake(w *worker[T]) {
	a.any = true
	for i := range a.wakes {
		if a.wakes[i] == nil {
			a.wakes[i] = w
			return
		}
	}
	w.ref.wake()
}

func (a *after[T]) reply(w *waiter[task[T]]) {
	a.any = true
	for i := range a.replies {
		if a.replies[i] == nil {
			a.replies[i] = w
			return
		}
	}
	w.ready <- struct{}{} // its err is set
}

func (a *after[T]) refuseNoRoutee(list *waiter[task[T]]) { a.noRoutee, a.any = list, true }

func (a *after[T]) run(d *dispatcher[T]) {
	if !a.any {
		return
	}
	for _, w := range a.wakes {
		if w != nil {
			w.ref.wake()
		}
	}
	for _, w := range a.replies {
		if w != nil {
			w.ready <- struct{}{}
		}
	}
	refuse(a.noRoutee, d.noWorker)
	if a.drops {
		d.mu.Lock()
		evicted := d.evicted
		d.evicted = nil
		d.mu.Unlock()
		tasks := make([]task[T], len(evicted))
		for i, job := range evicted {
			tasks[i].job = job
		}
		d.deadLetters(tasks, "", ErrEvicted)
	}
}

// await blocks a Submit queued as w until the pool accepts or refuses its
// job (refusing it once Wait begins or the pool's context ends), or ctx
// ends first.
func (p *Pool[T]) await(ctx context.Context, w *waiter[task[T]]) error {
	select {
	case <-w.ready:
		err := w.err
		w.err = nil
		p.d.waiters.Put(w)
		return err
	case <-ctx.Done():
	}
	err := ctx.Err()
	if !p.d.withdraw(w) {
		err = w.outcome() // the pool decided first
	}
	p.d.waiters.Put(w)
	return err
}

// refusal is what Submit returns for a verdict other than waiting, for a
// job of batch b, or of the pool if b is nil.
func (p *Pool[T]) refusal(v verdict, err error, b *Batch[T]) error {
	switch v {
	case accepted:
		return nil
	case shut:
		return ErrPoolClosed
	case ended:
		return p.ctx.Err()
	case noWorker:
		return p.d.noWorker
	case batchShut:
		return ErrBatchClosed
	case batchEnded:
		return b.ctx.Err()
	}
	return err
}
