package crew

// The workers' side of the dispatcher: a worker counts out the job it
// ended and takes its next one in one turn of the lock.

// A grant is a job dispatched to a worker, and whether to skip it rather
// than run it: if the pool's context (or its batch's) was seen done when it
// was dispatched. A grant is copied with every job: it stays 4 words for a
// job of one (a Job), the reason to skip being kept where it was seen.
type grant[T any] struct {
	t    task[T]
	skip skipCause
}

// Why a job is skipped.
type skipCause uint8

const (
	noSkip       skipCause = iota // run it
	batchStopped                  // its batch's context ended: the cause is in the batch's stop
	poolStopped                   // the pool's context ended: the cause is in the dispatcher's stop
)

// reason returns why g's job of pool p is skipped: the cause of its
// batch's or its pool's end, which a dispatch saw, and which never
// changes once seen.
func (g grant[T]) reason(p *Pool[T]) error {
	if g.skip == batchStopped {
		return g.t.f.batch.stop
	}
	return p.d.stop
}

// What a worker does after next.
type step int8

const (
	runNext step = iota // run (or skip) the job next returned
	park                // wait for a grant: the worker is idle
	retire              // exit: Resize retired the worker
)

// next counts out g, the job worker w ended (if ended), then returns w's
// next job: one queued at it (WithConsistentHash), else the next of the
// order. With none, it marks w idle (park), or tells a worker that Resize
// retired to exit. stop is the end of the pool's context, if the worker
// saw it before it took the lock.
func (d *dispatcher[T]) next(w *worker[T], g grant[T], ended bool, stop error, a *after[T]) (grant[T], step) {
	d.mu.Lock()
	defer d.mu.Unlock() // also if a mailbox panics
	d.noteStop(stop)
	d.tick(w.now)
	if ended {
		d.end(w, g, a)
	}
	switch {
	case w.pinned.n > 0:
		return d.pinned(w), runNext
	case w.retired:
		d.feed(a) // what its last job freed goes to an idle worker
		return grant[T]{}, retire
	}
	if f := d.first(); f != nil {
		g := d.take(f, w, a)
		d.feed(a)
		return g, runNext
	}
	d.idle.add(w.index)
	return grant[T]{}, park
}

// take dispatches the oldest job of flow f, which is runnable, to worker
// w. d.mu is held.
func (d *dispatcher[T]) take(f *flow[T], w *worker[T], a *after[T]) grant[T] {
	g := d.dispatched(f.pop(), d.skipping(f), w)
	d.fix(f)
	if f.mb != nil && d.waiting.first != nil {
		d.admit(a) // room opened in the mailbox
	}
	return g
}

// skipping returns why a job of f dispatched now is skipped, or noSkip:
// the end of its batch's context or the pool's, once a dispatch saw it.
// d.mu is held.
func (d *dispatcher[T]) skipping(f *flow[T]) skipCause {
	if b := f.batch; b != nil && b.seesDone() {
		return batchStopped
	}
	return d.stopped()
}

// stopped returns poolStopped once a dispatch saw the pool's context end,
// else noSkip. d.mu is held.
func (d *dispatcher[T]) stopped() skipCause {
	if d.stop != nil {
		return poolStopped
	}
	return noSkip
}

// pinned dispatches the oldest job queued at worker w. d.mu is held.
func (d *dispatcher[T]) pinned(w *worker[T]) grant[T] {
	return d.dispatched(w.unqueue(), d.stopped(), w)
}

// feed grants runnable jobs to idle workers, while both last: after a job
// ended, Resize, or a worker's death made jobs runnable. d.mu is held.
func (d *dispatcher[T]) feed(a *after[T]) {
	for d.idle.n > 0 {
		f := d.first()
		if f == nil {
			return
		}
		w := d.takeIdle()
		a.grant(w, d.take(f, w, a))
	}
}

// takeIdle takes the idle worker the strategy picks. d.idle.n > 0; d.mu is
// held.
func (d *dispatcher[T]) takeIdle() *worker[T] {
	return d.workers[d.idle.take(len(d.workers))]
}

// up reports whether worker i takes jobs. d.mu is held.
func (d *dispatcher[T]) up(i int) bool { return !d.workers[i].dead }

// end counts out a job that a worker ran or skipped: its flow may run
// another (a batch's limit, a key), and its room goes to the blocked
// Submits. d.mu is held.
func (d *dispatcher[T]) end(w *worker[T], g grant[T], a *after[T]) {
	f := g.t.f
	f.running--
	d.running--
	d.held--
	skipped := g.skip != noSkip
	d.done.ended(skipped)
	switch {
	case f.batch != nil:
		f.batch.ended(skipped)
	case skipped:
		d.ownSkips++
	}
	if s := f.share; s != nil && !skipped {
		ran := d.fair.settle(s, w.charged, w.ran, w.timed)
		if f.batch != nil {
			f.batch.ran += ran
		}
	}
	d.settle(f)
	if d.blocked() {
		d.admit(a)
	}
	d.checkDrained()
}

// settle puts flow f where it belongs once one of its jobs left its
// running ones: in the order if it may run another now (a limit), out of
// the key table if it has none (a key). d.mu is held.
func (d *dispatcher[T]) settle(f *flow[T]) {
	switch {
	case f.limit == 0: // no change: its runnable state does not depend on running
	case d.keys != nil && f.running == 0 && f.q.n == 0:
		d.keys.release(f)
	default:
		d.fix(f)
	}
}

// bury takes worker w, whose goroutine runtime.Goexit ended, out of the
// pool, counting out g, the job it held: as ended if it started, else as
// lost. The jobs left with w are returned, to become dead letters: g if
// it had not started, those queued at w and, if w was the last worker,
// every job not dispatched; the blocked Submits are then refused with
// ErrNoRoutee (left in a).
func (d *dispatcher[T]) bury(w *worker[T], g grant[T], started bool, a *after[T]) (lost []task[T]) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.tick(w.now)
	w.dead = true
	if !w.retired { // a retired worker was counted out by Resize
		d.live--
	}
	switch f := g.t.f; {
	case started:
		d.end(w, g, a)
	case f != nil: // dispatched to w, not started: out of the running jobs, into the lost
		d.running--
		if f.share != nil && g.skip == noSkip {
			d.fair.refund(f.share, w.charged)
		}
		if f.batch == nil { // a batch's stays in its flow until its dead letter (see lost)
			f.running--
			d.settle(f)
		}
		lost = append(lost, g.t)
	}
	for w.pinned.n > 0 {
		lost = append(lost, w.unqueue())
	}
	if d.live > 0 {
		d.feed(a)
		return lost
	}
	// No job will be dispatched: take every one out of its flow, those
	// behind a limit or a key that a retired worker still runs too.
	drain := func(f *flow[T]) {
		for n := f.queued(); n > 0; n-- {
			lost = append(lost, f.pop())
			if f.batch != nil {
				f.running++ // its batch's Wait waits for its dead letter too (see lost)
			}
		}
		d.fix(f)
	}
	drain(&d.own)
	for b := d.batches.first; b != nil; b = b.next {
		drain(&b.flow)
	}
	if d.keys != nil {
		d.keys.each(func(f *flow[T]) {
			if drain(f); f.running == 0 {
				d.keys.release(f) // only key flows: the pool's own is no key's
			}
		})
	}
	a.noRoutee = d.detachBlocked()
	return lost
}

// lost counts out the jobs that became dead letters, once they were
// delivered: evicted by the backlog mailbox, or left with a dead worker.
// now is the pool's clock (WithMetrics), or 0.
func (d *dispatcher[T]) lost(tasks []task[T], now int64, a *after[T]) {
	d.mu.Lock()
	d.tick(now)
	d.held -= len(tasks)
	d.done.dropped += int64(len(tasks))
	for _, t := range tasks {
		if b := t.f.batch; b != nil {
			t.f.running-- // it was counted in its flow until its dead letter (see bury)
			d.fix(t.f)
			b.lost()
		}
	}
	d.admit(a)
	d.feed(a)
	d.checkDrained()
	d.mu.Unlock()
}
