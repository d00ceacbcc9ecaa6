package crew

import (
	"context"
	"errors"
	"sync"
)

// A dispatcher is the part of a pool that decides which job runs where and
// when. It holds the flows of jobs not dispatched yet (the pool's own, each
// batch's, each key's) and the order that picks among them, the idle
// workers, the Submits blocked on a full pool, and the count of jobs held.
// One lock guards all of it, so that every such decision is made at one
// instant, in one order that all goroutines agree on; under it the
// dispatcher does queue work only (O(1), or O(log flows) to pick a flow):
// contexts are canceled, workers woken, Submits answered and dead letters
// delivered once it is released (see after). What follows:
//
//   - A job is dispatched when Submit hands it to an idle worker, which
//     happens only while no runnable flow has a job waiting, or when a
//     worker takes it from the order, which every worker does before it
//     goes idle. Across flows the order dispatches jobs in the order they
//     were queued; within a flow, in its order. So with the default FIFO
//     backlog, a job whose Submit returned before another's began is
//     dispatched first, among the jobs that may run (a flow at its limit,
//     a busy key, may not). With WithFairShare, the flows are grouped in
//     shares, and the share furthest behind goes first (see fairness);
//     within a share, jobs go in the order they were queued.
//   - Once a dispatch sees the pool's context done (stop), it and every
//     later one skip their job, and Submit refuses: no job is skipped while
//     a job dispatched after it runs. The pool's own cancellation (the
//     first error's, with WithCancelOnError, or Shutdown's) sets stop under
//     the lock before it cancels the context, once the lock is released:
//     dispatching stops before a job can see the context end.
//   - held counts the jobs accepted and not ended, wherever they are. A
//     job's end is counted under the lock after its handler returned (after
//     its dead letter, for one that never ran), so Wait, which waits for
//     held to reach 0 after it closed the pool, returns after the end of
//     every job accepted before it closed and of every job those submitted.
//   - Blocked Submits wait in a FIFO list (with WithFairShare, one per
//     share); the room a job's end frees goes to the first of them (of the
//     share whose turn it is), before any new Submit can take it.
type dispatcher[T any] struct {
	mu dispatchLock // guards the fields below, the flows, and the fields of Batch and worker that say so

	held       int               // jobs accepted and not ended
	limit      int               // the most jobs held at once; 0: no bound of the pool's own
	running    int               // jobs dispatched and not ended
	own        flow[T]           // the pool's own jobs: its backlog
	order      order[T]          // the runnable flows, first come first served
	fair       *fairness[T]      // WithFairShare: the runnable flows, by share, instead of order
	seq        uint64            // the number of the last job queued (or Submit blocked, with fair)
	keys       keyFlows[T]       // WithKey: a flow per key with jobs, each with a limit of 1
	pin        keyPin[T]         // WithConsistentHash: jobs queue at their key's worker
	idle       idleSet           // the workers waiting for a job
	workers    []*worker[T]      // every worker but the retired ones, in order
	live       int               // workers neither dead nor retired
	waiting    waitList[task[T]] // Submits blocked on a full pool, oldest first (with fair, in their shares)
	stop       error             // the cause of the pool context's end, once a dispatch saw it: from then on every dispatch skips
	drained    chan struct{}     // made by Wait, which closes the pool; closed once no job is held
	done       jobCounts         // the jobs that ended (counted under the lock, with held)
	ownSkips   int64             // the pool's own jobs skipped (batches count theirs)
	backlogged int64             // jobs that waited in a flow rather than going straight to an idle worker
	batches    batchList[T]      // the batches not waited for yet, for Shutdown
	nblocked   int               // the Submits blocked
	stamp      bool              // WithMetrics, without a backlog mailbox: jobs carry when they were accepted, and workers time every job
	now        int64             // WithMetrics: the latest reading of the pool's clock, which the blocked Submits let in are stamped with
}

// jobCounts counts how the jobs a pool (or a batch) accepted ended.
type jobCounts struct {
	completed int64 // ran, failed or not
	canceled  int64 // skipped because a context was done
	dropped   int64 // evicted by the backlog mailbox, or left with a worker that died
}

// ended counts a job that ran, or was skipped.
func (c *jobCounts) ended(skipped bool) {
	if skipped {
		c.canceled++
	} else {
		c.completed++
	}
}

// A verdict is what the dispatcher made of a job offered to it.
type verdict int8

const (
	accepted   verdict = iota // the pool holds the job
	waiting                   // the pool is full, and the Submit is queued
	full                      // the pool is full, and the caller may not wait
	shut                      // Wait began
	ended                     // the pool's context is done
	noWorker                  // every worker has died
	refused                   // the backlog mailbox refused the job: see the error
	batchShut                 // the batch's Wait began
	batchEnded                // the batch's context is done
	noWaiter                  // the pool is full, and the Submit has no waiter to queue (see offer)
)

// A task is a job in the dispatcher, with the flow it belongs to.
type task[T any] struct {
	job T
	f   *flow[T]
	at  int64 // when the pool accepted it (WithMetrics: see Pool.clock), or 0
}

// How a job is offered to the pool.
type offerMode int8

const (
	mayWait offerMode = iota // Submit: queued behind the blocked Submits when the pool is full
	noWait                   // TrySubmit
	fromJob                  // a job's own Submit (see Pool.Submit)
)

// errWouldBlock is what a flow's mailbox says when it is full and would
// block.
var errWouldBlock = errors.New("crew: the backlog mailbox is full")

// noteStop records stop, the cause of the pool context's end that the
// caller saw before it took the lock (nil if it saw none). d.mu is held.
func (d *dispatcher[T]) noteStop(stop error) {
	if stop != nil && d.stop == nil {
		d.stop = stop
	}
}

// offer takes t into the pool if it can. A job's own Submit (fromJob) is
// accepted after Wait began and, beyond the bound, for a keyed pool or a
// batch with a limit; it never waits, and runs its job inline when offer
// says full. When the pool is full, a Submit that may wait is queued as w,
// and offer returns waiting; with no w, full. What to do once the lock is
// released is left in a.
//
// A Submit that may wait is queued with a waiter from waiters, where the
// Submits that blocked put them back: offer takes one only when the
// Submit must wait, and never makes one under the lock (nor does
// waiters, which has no New): with none, it returns noWaiter, and the
// caller makes one and offers again.
func (d *dispatcher[T]) offer(t task[T], mode offerMode, waiters *sync.Pool, stop error, a *after[T]) (verdict, *waiter[task[T]], error) {
	d.mu.Lock()
	defer d.mu.Unlock() // also if a mailbox or key function panics
	d.noteStop(stop)
	b := t.f.batch
	switch {
	case d.drained != nil && (mode != fromJob || d.isDrained()):
		// A job's own Submit is let in while some job runs: after the pool
		// drained, it comes from a goroutine a job left behind.
		return shut, nil, nil
	case d.live == 0:
		return noWorker, nil, nil
	case d.stop != nil:
		return ended, nil, nil
	case b != nil && b.closed() && (mode != fromJob || b.held() == 0):
		return batchShut, nil, nil
	case b != nil && b.seesDone():
		return batchEnded, nil, nil
	}
	if d.limit > 0 && d.held >= d.limit || d.blocked() {
		switch {
		case mode == mayWait:
			return d.enlist(t, waiters)
		case mode == noWait, d.keys == nil && d.pin == nil && t.f.limit == 0:
			return full, nil, nil // for a job's own Submit, run it inline: blocking could deadlock
		}
		// A keyed job runs after its key's jobs, and a limited batch's job
		// within its limit, so never inline: it goes beyond the bound.
	}
	switch err := d.place(t, a); {
	case err == errWouldBlock && mode == mayWait:
		return d.enlist(t, waiters)
	case err == errWouldBlock:
		return full, nil, nil
	case err != nil:
		return refused, nil, err
	}
	return accepted, nil, nil
}

// place accepts t: it hands t to an idle worker if t may run now and no
// job waits before it, else queues it in its flow (or at its key's worker,
// with WithConsistentHash). d.mu is held. Only a backlog mailbox fails:
// errWouldBlock when it is full and would block, or the error it refused
// the job with; then t is not accepted.
func (d *dispatcher[T]) place(t task[T], a *after[T]) error {
	if d.keys != nil {
		t.f = d.keys.flow(t.job)
	}
	switch f := t.f; {
	case d.pin != nil:
		w := d.workers[d.pin.place(t.job, len(d.workers), d.up)] // d.live > 0: some worker is up
		w.queue(t)
		if d.idle.has(w.index) {
			d.idle.remove(w.index)
			a.grant(w, d.pinned(w))
		}
	case d.idle.n > 0 && d.first() == nil && f.free():
		// Workers take from the order before they go idle: if one is idle,
		// no job may run before t.
		if f.share != nil {
			d.fair.wake(f.share, d.number()) // a job that never waits backlogs its share too, for an instant
		}
		w := d.takeIdle()
		a.grant(w, d.dispatched(t, noSkip, w))
	case f.mb != nil:
		n := len(f.evicted)
		switch err := f.mb.Enqueue(canceledCtx, t.job); {
		case err == context.Canceled:
			return errWouldBlock // a Backpressure mailbox that is full
		case err != nil:
			return err
		}
		if len(f.evicted) > n {
			a.evictions = true
		}
		d.backlogged++
		d.order.fix(f)
	default:
		seq := d.number()
		if f.share != nil {
			d.fair.wake(f.share, seq)
		}
		f.push(t, seq)
		d.backlogged++
		if f.at == 0 {
			// A flow in its order keeps its place: a job queued behind
			// others changes neither its head nor whether it may run.
			d.fix(f)
		}
	}
	d.held++
	return nil
}

// canceledCtx makes a backlog mailbox that would block return at once.
var canceledCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// dispatched counts t out of its flow's waiting jobs and into the running
// ones, and returns its grant to worker w, to be skipped if skip says
// so. With WithFairShare, a job that runs is charged to its share, which
// w keeps for the job's end; a skipped one costs its share nothing. d.mu
// is held.
func (d *dispatcher[T]) dispatched(t task[T], skip skipCause, w *worker[T]) grant[T] {
	t.f.running++
	d.running++
	if s := t.f.share; s != nil && skip == noSkip {
		w.charged, w.timed = d.fair.charge(s)
		w.timed = w.timed || d.stamp // the worker times every job anyway
	}
	return grant[T]{t: t, skip: skip}
}

// tick records now, a reading of the pool's clock (WithMetrics; 0 if
// none), unless a later one was recorded. d.mu is held.
func (d *dispatcher[T]) tick(now int64) {
	d.now = max(d.now, now)
}

// number numbers a job queued now, or a Submit blocked: later ones have
// higher numbers. d.mu is held.
func (d *dispatcher[T]) number() uint64 {
	d.seq++
	return d.seq
}

// first returns the runnable flow whose job is dispatched next, or nil if
// none is runnable. d.mu is held.
func (d *dispatcher[T]) first() *flow[T] {
	if d.fair != nil {
		return d.fair.first()
	}
	return d.order.first()
}

// fix puts f where it belongs in the order after its jobs or its running
// count changed. d.mu is held.
func (d *dispatcher[T]) fix(f *flow[T]) {
	if f.share != nil {
		d.fair.fix(f)
	} else {
		d.order.fix(f)
	}
}

// isDrained reports whether Wait began and no job is held since. d.mu is
// held.
func (d *dispatcher[T]) isDrained() bool {
	select {
	case <-d.drained:
		return true
	default:
		return false
	}
}

// checkDrained closes drained once Wait began and no job is held. d.mu is
// held.
func (d *dispatcher[T]) checkDrained() {
	if d.held == 0 && d.drained != nil && !d.isDrained() {
		close(d.drained)
	}
}

// close closes the pool to new jobs (Wait), with drained (a new channel)
// unless it was closed already, and returns the blocked Submits, to be
// refused, and the channel closed once no job is held.
func (d *dispatcher[T]) close(drained chan struct{}) (*waiter[task[T]], <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.drained != nil {
		return nil, d.drained
	}
	d.drained = drained
	list := d.detachBlocked()
	d.checkDrained()
	return list, drained
}

// stopping returns the workers for Wait to stop, once the pool drained:
// every one is idle, or about to be, for no job is held, or dead.
func (d *dispatcher[T]) stopping() []*worker[T] {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.workers
}

// skippedOwn reports whether a job of the pool's own was skipped.
func (d *dispatcher[T]) skippedOwn() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ownSkips > 0
}

// takeEvicted returns the jobs the backlog mailbox evicted, for their dead
// letters.
func (d *dispatcher[T]) takeEvicted() []T {
	d.mu.Lock()
	defer d.mu.Unlock()
	jobs := d.own.evicted
	d.own.evicted = nil
	return jobs
}

// stopAll records cause as the end of the pool's context, and returns the
// blocked Submits, to be refused once the context is canceled.
func (d *dispatcher[T]) stopAll(cause error) *waiter[task[T]] {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.noteStop(cause)
	return d.detachBlocked()
}
