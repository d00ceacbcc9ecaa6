package crew

import (
	"context"
	"errors"
	"sync"
)

// A dispatcher is the part of a pool that decides which job runs where and
// when. It holds the backlog (the jobs no worker has taken yet), the idle
// workers, the Submits blocked on a full pool, and the count of jobs held.
// One lock guards all of it, so that every such decision is made at one
// instant, in one order that all goroutines agree on. What follows:
//
//   - A job is dispatched when Submit hands it to an idle worker, which
//     happens only while the backlog is empty, or when a worker takes it
//     from the backlog, which every worker does before it goes idle.
//     Dispatches follow the backlog's order: with the default FIFO backlog,
//     a job whose Submit returned before another's began is dispatched
//     first.
//   - Once a dispatch sees the pool's context done (see stopped), it and every
//     later one skip their job, and Submit refuses: no job is skipped while
//     a job dispatched after it runs.
//   - held counts the jobs accepted and not ended, wherever they are. A
//     job's end is counted under the lock after its handler returned (after
//     its dead letter, for one that never ran), so Wait, which waits for
//     held to reach 0 after it closed the pool, returns after the end of
//     every job accepted before it closed and of every job those submitted.
//   - Blocked Submits wait in a FIFO list; the room a job's end frees goes
//     to the first of them, before any new Submit can take it.
type dispatcher[T any] struct {
	// mu guards the fields below, and each worker's own queue and counters.
	// It has a cache line of its own: goroutines spinning on it would
	// otherwise keep taking the line the holder writes from under it.
	mu spinMutex
	_  [60]byte

	// What every job reads or writes, on two cache lines.
	backlog    ring[T]           // the backlog of the pool's own jobs, unless WithMailbox made one
	pushed     uint64            // the jobs pushed to backlog so far: the first has index pushed-backlog.n
	held       int               // jobs accepted and not ended
	waiting    waitList[task[T]] // Submits blocked on a full pool, oldest first
	limit      int               // the most jobs held at once; 0: no bound of the pool's own
	nidle      int               // idle workers
	backlogged int64             // jobs that waited in the backlog
	// stopped records that the pool's context was seen done: from then on
	// every dispatch skips its job. The pool's own cancellation (the first
	// error's, with WithCancelOnError) sets it as it cancels. A parent's
	// cannot, so when the parent can end (watch), every dispatch also reads
	// the context before it takes the lock (the read costs a cache line
	// that the lock's holder should not wait for) and sets stopped under the
	// lock if it was done. A dispatch that read "not done" but took the lock
	// after one that read "done" skips too: from the first dispatch that
	// skips, every later one skips, in the order of the lock, which is the
	// backlog's. refuseAll sets it too, once the context has ended.
	stopped bool
	closed  bool  // Wait began: only the jobs' own Submits are accepted
	plain   bool  // the default backlog, no keys: the lean paths apply
	live    int32 // workers neither dead nor stopped by Wait
	cursor  int   // the worker after the one last handed a job

	idle     []uint64 // one bit per idle worker: parked, or about to be, with nothing to run
	workers  []*worker[T]
	strategy Strategy
	ctx      context.Context // the pool's
	watch    bool            // ctx's parent can end: dispatches read ctx (see stopped)
	mb       Mailbox[T]      // the backlog WithMailbox made
	keys     keyGate[T]      // WithKey: jobs wait behind their key's job here
	// The backlog of batch jobs (see popBacklog): batched holds those that
	// may run, in submission order; ready those that became free to run
	// after they were submitted, released by their batch's limit, in
	// submission order too. ready is also a keyed pool's whole backlog.
	// seq numbers their jobs in submission order.
	batched ring[prioItem[queued[T]]]
	ready   prioHeap[queued[T]]
	seq     uint64
	pin     keyPin[T] // WithConsistentHash: jobs queue at their key's worker
	upFn    func(int) bool
	evicted []T   // jobs the backlog mailbox evicted, waiting for their dead letters
	dropped int64 // jobs evicted, or left behind by workers that died

	// Batches and Resize.
	batches   batchList[T] // the batches not waited for yet, for Shutdown
	overLimit int          // batch jobs waiting behind their batch's limit
	skipped   int64        // batch jobs skipped because their batch's context was done
	perWorker int          // the bound per worker (1+queue size), or 0: Resize moves limit with it
	gone      []*worker[T] // workers Resize retired, until Wait has seen them exit
	retired   retiredStats // what the retired workers that exited had done

	drained   chan struct{} // closed once no job is held after Wait began
	isDrained bool
	unwatch   func() bool   // stops the watch of ctx that runs refuseAll
	refused   chan struct{} // closed once refuseAll has run

	waiters sync.Pool // of *waiter[task[T]]

	// noWorker is what a Submit gets once every worker has died: an error
	// that names the pool and matches ErrNoRoutee.
	noWorker error

	// letter delivers the dead letter of a job that will never run.
	letter func(t task[T], target string, reason error)
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
)

// A task is a job in the dispatcher, with the batch it belongs to, if any.
type task[T any] struct {
	job T
	b   *Batch[T]
}

// A queued is a batch's job waiting to be dispatched, with mark, the number
// of the pool's own jobs pushed to the backlog before it was accepted: those
// from index mark on came after it. (A keyed pool's job has no mark.)
type queued[T any] struct {
	task[T]
	mark uint64
}

// How a job is offered to the pool.
type offerMode int8

const (
	mayWait offerMode = iota // Submit: queued behind the blocked Submits when the pool is full
	noWait                   // TrySubmit
	fromJob                  // a job's own Submit (see Pool.Submit)
)

// errWouldBlock is what send returns for a backlog mailbox that is full and
// would block.
var errWouldBlock = errors.New("crew: the backlog mailbox is full")

func (d *dispatcher[T]) init(n int, s Strategy, ctx, parent context.Context) {
	d.strategy, d.ctx, d.live = s, ctx, int32(n)
	d.watch = parent.Done() != nil
	d.upFn = d.up
	d.idle = make([]uint64, (n+63)/64)
	d.drained = make(chan struct{})
	d.refused = make(chan struct{})
	d.waiters.New = func() any { return &waiter[task[T]]{ready: make(chan struct{}, 1)} }
	d.plain = d.mb == nil && d.keys == nil && d.pin == nil
	d.unwatch = context.AfterFunc(ctx, d.refuseAll)
}

// useMailbox makes mb the backlog, catching what a DropOldest one evicts.
func (d *dispatcher[T]) useMailbox(mb Mailbox[T]) {
	d.mb = mb
	if dr, ok := mb.(Dropper[T]); ok {
		// The hook runs inside Enqueue, under d.mu: keep the job for the
		// dead letters, delivered once the lock is released.
		dr.OnDrop(func(job T, _ error) { d.evicted = append(d.evicted, job) })
	}
}

// seesDone reads, before the lock is taken, whether the pool's context is
// done, when its parent can end it (see stopped).
func (d *dispatcher[T]) seesDone() bool { return d.watch && d.ctx.Err() != nil }

// lock takes d.mu, recording that the caller saw the context done.
func (d *dispatcher[T]) lock(done bool) {
	d.mu.Lock()
	if done {
		d.stopped = true
	}
}

// cancel cancels the pool's context with cause, and stops dispatching, in
// one turn of the lock: no dispatch runs a job after a job could see the
// context end (the parent of a pool of NewGroup cannot end, so dispatches
// do not read it), nor skips one before its cause is set.
func (d *dispatcher[T]) cancel(cancel context.CancelCauseFunc, cause error) {
	d.lock(true)
	cancel(cause)
	d.mu.Unlock()
}

// offer takes t into the pool if it can. A job's own Submit (fromJob) is
// accepted after Wait began and, in a keyed pool, beyond the bound; it never
// waits, and runs its job inline when offer says full. When the pool is
// full, a Submit that may wait is queued with t, and offer returns waiting
// and the blocked Submit. Workers to wake are left in a.
func (d *dispatcher[T]) offer(t task[T], mode offerMode, a *after[T]) (verdict, *waiter[task[T]], error) {
	done := d.seesDone()
	if !d.plain {
		return d.offerAny(t, mode, done, a)
	}
	// The default backlog, with room: what nearly every Submit does.
	d.lock(done)
	if d.closed || d.stopped || d.live == 0 || d.held >= d.limit || d.waiting.first != nil || t.b != nil && !t.b.free() {
		d.mu.Unlock()
		return d.offerAny(t, mode, done, a)
	}
	d.held++
	if t.b != nil {
		t.b.accepted++ // free: under its limit
	}
	if d.nidle > 0 && d.ready.len() == 0 {
		w := d.takeIdle()
		w.own.push(t)
		d.mu.Unlock()
		a.wake(w)
		return accepted, nil, nil
	}
	var seq uint64
	if t.b != nil {
		seq = d.number()
	}
	d.enqueue(t, seq)
	var idle *worker[T]
	if d.nidle > 0 { // older jobs are ready (a retired worker released them): an idle worker takes them first
		idle = d.takeIdle()
	}
	d.mu.Unlock()
	if idle != nil {
		a.wake(idle)
	}
	return accepted, nil, nil
}

// number numbers a batch's job, or a keyed pool's, in submission order. d.mu
// is held.
func (d *dispatcher[T]) number() uint64 {
	d.seq++
	return d.seq
}

// enqueue puts a job that may run now, numbered seq if it is a batch's, in
// a plain pool's backlog. d.mu is held.
func (d *dispatcher[T]) enqueue(t task[T], seq uint64) {
	if t.b == nil {
		d.backlog.push(t.job)
		d.pushed++
	} else {
		d.batched.push(prioItem[queued[T]]{msg: queued[T]{t, d.pushed}, seq: seq})
	}
	d.backlogged++
}

// offerAny is offer for every pool and case.
func (d *dispatcher[T]) offerAny(t task[T], mode offerMode, done bool, a *after[T]) (verdict, *waiter[task[T]], error) {
	d.lock(done)
	defer d.mu.Unlock() // also if a mailbox or key function panics
	b := t.b
	switch {
	case d.closed && (mode != fromJob || d.isDrained):
		// A job's own Submit is let in while some job runs: after the pool
		// drained, it comes from a goroutine a job left behind.
		return shut, nil, nil
	case d.live == 0:
		return noWorker, nil, nil
	case d.stopped:
		return ended, nil, nil
	case b != nil && b.closed && (mode != fromJob || b.held() == 0):
		return batchShut, nil, nil
	case b != nil && b.stopped:
		return batchEnded, nil, nil
	}
	if d.limit > 0 && d.held >= d.limit || d.waiting.first != nil {
		switch {
		case mode != fromJob:
			return d.enlist(mode, t)
		case d.keys == nil && d.pin == nil && (b == nil || b.limit == 0):
			return full, nil, nil // run it inline: blocking could deadlock
		}
		// A keyed job runs after its key's jobs, and a limited batch's job
		// within its limit, so never inline: it goes beyond the bound.
	}
	var seq uint64
	if d.keys != nil || t.b != nil {
		seq = d.number()
	}
	if d.keys != nil && !d.keys.enter(t.job, seq) {
		d.held++
		return accepted, nil, nil
	}
	switch err := d.place(t, seq, a); {
	case err == errWouldBlock && mode == fromJob:
		return full, nil, nil
	case err == errWouldBlock:
		return d.enlist(mode, t)
	case err != nil:
		return refused, nil, err
	}
	d.held++
	return accepted, nil, nil
}

// place sends a job that may run now (its key, if any, is free) on, as
// send does, unless it belongs to a batch at its limit: then it waits
// behind the batch's running jobs (see Batch). d.mu is held; the job is
// not counted in held yet. It fails as send does.
func (d *dispatcher[T]) place(t task[T], seq uint64, a *after[T]) error {
	if b := t.b; b != nil { // a plain pool's: send does not fail
		if !b.accept() {
			b.queue.push(prioItem[queued[T]]{msg: queued[T]{t, d.pushed}, seq: seq})
			d.overLimit++
			d.backlogged++
			return nil
		}
	}
	return d.send(t, seq, a)
}

// send sends a job that may run now to an idle worker, or to the backlog,
// from which a worker dispatches it; seq is its place in the order of
// submission. d.mu is held; the job is not counted in held yet. Only a
// backlog mailbox fails: errWouldBlock when it is full and would block, or
// the error it refused the job with.
func (d *dispatcher[T]) send(t task[T], seq uint64, a *after[T]) error {
	if d.pin != nil {
		i := d.pin.place(t.job, len(d.workers), d.upFn) // d.live > 0: some worker is up
		w := d.workers[i]
		w.own.push(t)
		if d.isIdle(i) {
			d.unidle(i)
			a.wake(w)
		}
		return nil
	}
	// Workers take from the backlog before they go idle, under this lock:
	// if one is idle, the backlog is empty, and t is the oldest job.
	if d.nidle > 0 && d.ready.len() == 0 {
		w := d.takeIdle()
		w.own.push(t)
		a.wake(w)
		return nil
	}
	if d.mb == nil {
		if d.keys != nil {
			d.ready.push(prioItem[queued[T]]{msg: queued[T]{task: t}, seq: seq})
			d.backlogged++
		} else {
			d.enqueue(t, seq)
		}
		if d.nidle > 0 { // only in bury: older jobs are ready; an idle worker takes them in order
			a.wake(d.takeIdle())
		}
		return nil
	}
	n := len(d.evicted)
	err := d.mb.Enqueue(canceledCtx, t.job)
	if len(d.evicted) > n {
		a.drops, a.any = true, true
	}
	switch {
	case err == nil:
		d.backlogged++
		return nil
	case err == context.Canceled:
		return errWouldBlock // a Backpressure mailbox that is full
	}
	return err
}

// canceledCtx makes a backlog mailbox that would block return at once.
var canceledCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// queued reports the jobs waiting to be dispatched. d.mu is held.
func (d *dispatcher[T]) queued() int {
	n := d.backlog.n + d.batched.n + d.ready.len() + d.overLimit
	if d.mb != nil {
		n += d.mb.Len()
	}
	if d.keys != nil {
		n += d.keys.queued()
	}
	if d.pin != nil {
		for _, w := range d.workers {
			n += w.own.n
		}
	}
	return n
}
