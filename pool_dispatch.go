package crew

import (
	"context"
	"errors"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
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
//   - Once a dispatch sees the pool's context done (see stop), it and every
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
	backlog     ring[T]     // the backlog, unless WithMailbox made one
	held        int         // jobs accepted and not ended
	first, last *blocked[T] // Submits blocked on a full pool, oldest first
	limit       int         // the most jobs held at once; 0: no bound of the pool's own
	nidle       int         // idle workers
	backlogged  int64       // jobs that waited in the backlog
	stopped     bool        // the pool's context was seen done: dispatches skip
	closed      bool        // Wait began: only the jobs' own Submits are accepted
	plain       bool        // the default backlog, no keys: the lean paths apply
	live        int32       // workers that have not died
	cursor      int         // the worker after the one last handed a job

	idle     []uint64 // one bit per idle worker: parked, or about to be, with nothing to run
	workers  []worker[T]
	strategy Strategy
	ctx      context.Context // the pool's
	watch    bool            // ctx's parent can end: dispatches read ctx (see stop)
	mb       Mailbox[T]      // the backlog WithMailbox made
	keys     keyGate[T]      // WithKey: jobs wait behind their key's job here
	ready    seqHeap[T]      // WithKey: the backlog, in submission order
	seq      uint64          // WithKey: the jobs submitted so far
	pin      keyPin[T]       // WithConsistentHash: jobs queue at their key's worker
	upFn     func(int) bool
	evicted  []T   // jobs the backlog mailbox evicted, waiting for their dead letters
	dropped  int64 // jobs evicted, or left behind by workers that died

	drained   chan struct{} // closed once no job is held after Wait began
	isDrained bool
	unwatch   func() bool   // stops the watch of ctx that runs refuseAll
	refused   chan struct{} // closed once refuseAll has run

	waiters sync.Pool // of *blocked[T]

	// letter delivers the dead letter of a job that will never run.
	letter func(job T, target string, reason error)
}

// A blocked is a Submit blocked on a full pool. Once it has left the list,
// err holds its outcome (nil when its job was accepted) and ready is
// signalled; the send orders the write of err before its read.
type blocked[T any] struct {
	job   T
	next  *blocked[T]
	err   error
	ready chan struct{} // cap 1
}

// A verdict is what the dispatcher made of a job offered to it.
type verdict int8

const (
	accepted verdict = iota // the pool holds the job
	waiting                 // the pool is full, and the Submit is queued
	full                    // the pool is full, and the caller may not wait
	shut                    // Wait began
	ended                   // the pool's context is done
	noWorker                // every worker has died
	refused                 // the backlog mailbox refused the job: see the error
)

// How a job is offered to the pool.
type offerMode int8

const (
	mayWait offerMode = iota // Submit: queued behind the blocked Submits when the pool is full
	noWait                   // TrySubmit
	fromJob                  // a job's own Submit (see Pool.Submit)
)

// errWouldBlock is what dispatch returns for a backlog mailbox that is full
// and would block.
var errWouldBlock = errors.New("crew: the backlog mailbox is full")

func (d *dispatcher[T]) init(n int, s Strategy, ctx, parent context.Context) {
	d.strategy, d.ctx, d.live = s, ctx, int32(n)
	d.watch = parent.Done() != nil
	d.upFn = d.up
	d.idle = make([]uint64, (n+63)/64)
	d.drained = make(chan struct{})
	d.refused = make(chan struct{})
	d.waiters.New = func() any { return &blocked[T]{ready: make(chan struct{}, 1)} }
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

// stop records that the pool's context was seen done; every dispatch skips
// its job once stopped is set. The pool's own cancellations (the first
// error's, with WithCancelOnError) call stop as they cancel. A parent's
// cannot, so when the parent can end (watch), every dispatch also reads the
// context before it takes the lock (the read costs a cache line that the
// lock's holder should not wait for) and calls stop under the lock if it
// was done. A dispatch that read "not done" but took the lock after one
// that read "done" skips too: from the first dispatch that skips, every
// later one skips, in the order of the lock, which is the backlog's.
// refuseAll calls stop too, once the context has ended.
func (d *dispatcher[T]) stop() { d.stopped = true }

// cancel cancels the pool's context with cause, and stops dispatching.
func (d *dispatcher[T]) cancel(cancel context.CancelCauseFunc, cause error) {
	cancel(cause)
	d.mu.Lock()
	d.stop()
	d.mu.Unlock()
}

// offer takes job into the pool if it can. A job's own Submit (fromJob) is
// accepted after Wait began and, in a keyed pool, beyond the bound; it never
// waits, and runs its job inline when offer says full. When the pool is
// full, a Submit that may wait is queued with job, and offer returns
// waiting and the blocked Submit. Workers to wake are left in a.
func (d *dispatcher[T]) offer(job T, mode offerMode, a *after[T]) (verdict, *blocked[T], error) {
	done := d.watch && d.ctx.Err() != nil
	if !d.plain {
		return d.offerAny(job, mode, done, a)
	}
	// The default backlog, with room: what nearly every Submit does.
	d.mu.Lock()
	if done {
		d.stop()
	}
	if d.closed || d.stopped || d.live == 0 || d.held >= d.limit || d.first != nil {
		d.mu.Unlock()
		return d.offerAny(job, mode, done, a)
	}
	d.held++
	if d.nidle > 0 {
		w := d.takeIdle()
		w.own.push(job)
		d.mu.Unlock()
		a.wake(w)
		return accepted, nil, nil
	}
	d.backlog.push(job)
	d.backlogged++
	d.mu.Unlock()
	return accepted, nil, nil
}

// offerAny is offer for every pool and case.
func (d *dispatcher[T]) offerAny(job T, mode offerMode, done bool, a *after[T]) (verdict, *blocked[T], error) {
	d.mu.Lock()
	defer d.mu.Unlock() // also if a mailbox or key function panics
	if done {
		d.stop()
	}
	switch {
	case d.closed && mode != fromJob:
		return shut, nil, nil
	case d.live == 0:
		return noWorker, nil, nil
	case d.stopped:
		return ended, nil, nil
	}
	if d.limit > 0 && d.held >= d.limit || d.first != nil {
		switch {
		case mode != fromJob:
			return d.enlist(mode, job)
		case d.keys == nil && d.pin == nil:
			return full, nil, nil // run it inline: blocking could deadlock
		}
		// A keyed job runs after its key's jobs, so never inline: it goes
		// beyond the bound.
	}
	seq := d.seq
	if d.keys != nil {
		d.seq++
		if !d.keys.enter(job, seq) {
			d.held++
			return accepted, nil, nil
		}
	}
	switch err := d.dispatch(job, seq, a); {
	case err == errWouldBlock && mode == fromJob:
		return full, nil, nil
	case err == errWouldBlock:
		return d.enlist(mode, job)
	case err != nil:
		return refused, nil, err
	}
	d.held++
	return accepted, nil, nil
}

// enlist queues a Submit that may wait behind the blocked Submits. d.mu is
// held.
func (d *dispatcher[T]) enlist(mode offerMode, job T) (verdict, *blocked[T], error) {
	if mode != mayWait {
		return full, nil, nil
	}
	w := d.waiters.Get().(*blocked[T])
	w.job, w.next = job, nil
	if d.last == nil {
		d.first = w
	} else {
		d.last.next = w
	}
	d.last = w
	return waiting, w, nil
}

// withdraw takes w off the list of blocked Submits, and reports whether it
// was still there: if not, its outcome is on its way to w.ready.
func (d *dispatcher[T]) withdraw(w *blocked[T]) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	var prev *blocked[T]
	for x := d.first; x != nil; prev, x = x, x.next {
		if x != w {
			continue
		}
		if prev == nil {
			d.first = x.next
		} else {
			prev.next = x.next
		}
		if d.last == x {
			d.last = prev
		}
		var zero T
		x.job, x.next = zero, nil
		return true
	}
	return false
}

// dispatch sends a job that may run now (its key, if any, is free) to an
// idle worker, or to the backlog; seq is its place in the order of
// submission, for a keyed pool's. d.mu is held; the job is not counted in
// held yet. Only a backlog mailbox fails: errWouldBlock when it is full and
// would block, or the error it refused the job with.
func (d *dispatcher[T]) dispatch(job T, seq uint64, a *after[T]) error {
	if d.pin != nil {
		i := d.pin.place(job, len(d.workers), d.upFn) // d.live > 0: some worker is up
		w := &d.workers[i]
		w.own.push(job)
		if d.isIdle(i) {
			d.unidle(i)
			a.wake(w)
		}
		return nil
	}
	// Workers take from the backlog before they go idle, under this lock:
	// if one is idle, the backlog is empty, and job is the oldest.
	if d.nidle > 0 {
		w := d.takeIdle()
		w.own.push(job)
		a.wake(w)
		return nil
	}
	switch {
	case d.keys != nil:
		d.ready.push(seqJob[T]{seq, job})
		d.backlogged++
		return nil
	case d.mb == nil:
		d.backlog.push(job)
		d.backlogged++
		return nil
	}
	n := len(d.evicted)
	err := d.mb.Enqueue(canceledCtx, job)
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

// shareEvery is how many jobs a worker runs between two looks at the clock.
const shareEvery = 64

// share yields the processor once the worker has run jobs without a break
// for a millisecond, to the other workers (and goroutines) waiting for one:
// Go preempts a goroutine only after 10 ms, and a worker whose backlog
// never empties would otherwise keep its processor that long while other
// workers, one perhaps holding a job handed to it, wait.
func (w *worker[T]) share() {
	w.streak = 0
	now := time.Now()
	switch {
	case w.since.IsZero():
		w.since = now
	case now.Sub(w.since) >= time.Millisecond:
		w.since = now
		runtime.Gosched()
	}
}

// take is one pass of next.
func (d *dispatcher[T]) take(w *worker[T], park bool, a *after[T]) (job T, ok, skip bool) {
	done := d.watch && d.ctx.Err() != nil
	if !d.plain {
		return d.takeAny(w, park, done, a)
	}
	d.mu.Lock()
	if done {
		d.stop()
	}
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
	case park:
		d.setIdle(w.index)
	}
	d.mu.Unlock()
	return job, ok, skip
}

// takeAny is take for every pool.
func (d *dispatcher[T]) takeAny(w *worker[T], park, done bool, a *after[T]) (job T, ok, skip bool) {
	d.mu.Lock()
	defer d.mu.Unlock() // also if a mailbox or key function panics
	if done {
		d.stop()
	}
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
		var e seqJob[T]
		if e, ok = d.ready.pop(); ok {
			return e.job, true, d.stopped
		}
	case d.mb == nil:
		if job, ok = d.backlog.pop(); ok {
			if d.backlog.n == 0 {
				d.backlog.shrinkIfDrained()
			}
			return job, true, d.stopped
		}
	default:
		if job, ok = d.mb.Dequeue(); ok {
			d.admit(a) // room opened in the mailbox
			return job, true, d.stopped
		}
	}
	if park {
		d.setIdle(w.index)
	}
	return job, false, false
}

// end counts out the job w ended, dispatches the next job of its key, and
// hands the room to blocked Submits. d.mu is held.
func (d *dispatcher[T]) end(w *worker[T], a *after[T]) {
	w.ended = false
	if w.skipped {
		w.skipped = false
		w.canceled++
	} else {
		w.handled++
	}
	d.held--
	if d.plain && d.first == nil && !d.closed {
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
	if d.first != nil {
		d.admit(a)
	}
	if d.closed {
		d.checkDrained()
	}
}

// admit hands free room to the blocked Submits, oldest first. d.mu is held.
func (d *dispatcher[T]) admit(a *after[T]) {
	for w := d.first; w != nil; w = d.first {
		if d.limit > 0 && d.held >= d.limit || d.stopped {
			return // once the context is done, refuseAll answers them
		}
		var err error
		seq := d.seq
		if d.keys != nil {
			d.seq++
		}
		if d.keys == nil || d.keys.enter(w.job, seq) {
			if err = d.dispatch(w.job, seq, a); err == errWouldBlock {
				return
			}
		}
		d.first = w.next
		if d.first == nil {
			d.last = nil
		}
		if err == nil {
			d.held++
		}
		var zero T
		w.job, w.next, w.err = zero, nil, err
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
	d.mu.Lock()
	d.stop()
	list := d.first
	d.first, d.last = nil, nil
	d.mu.Unlock()
	refuse(list, d.ctx.Err())
}

// refuse answers a detached list of blocked Submits with err.
func refuse[T any](list *blocked[T], err error) {
	for w := list; w != nil; {
		next := w.next
		var zero T
		w.job, w.next, w.err = zero, nil, err
		w.ready <- struct{}{} // the Submit may reuse w from here on
		w = next
	}
}

// close closes the pool to new jobs (Wait) and refuses the blocked Submits.
func (d *dispatcher[T]) close() {
	d.mu.Lock()
	d.closed = true
	list := d.first
	d.first, d.last = nil, nil
	d.checkDrained()
	d.mu.Unlock()
	refuse(list, ErrPoolClosed) // their jobs are new: refuse them
}

// bury takes a worker that died (its job called runtime.Goexit) out of the
// pool and returns the jobs left with it, to become dead letters: those
// queued at it, and, if it was the last worker, every job held, whose
// blocked Submits it answers with ErrNoRoutee. It returns nil when w was
// stopped by Wait, with nothing left.
func (d *dispatcher[T]) bury(w *worker[T]) []T {
	var a after[T]
	rest := d.buryLocked(w, &a)
	a.run(d)
	return rest
}

func (d *dispatcher[T]) buryLocked(w *worker[T], a *after[T]) []T {
	d.mu.Lock()
	defer d.mu.Unlock()
	if w.dead {
		return nil
	}
	w.dead = true
	if w.ended {
		d.end(w, a)
		for d.nidle > 0 && d.ready.len() > 0 { // what end queued for w
			e, _ := d.ready.pop()
			_ = d.dispatch(e.job, e.seq, a)
		}
	}
	if d.isIdle(w.index) {
		d.unidle(w.index) // stopped by Wait, or idle when the last worker died
	}
	var rest []T
	for job, ok := w.own.pop(); ok; job, ok = w.own.pop() {
		rest = append(rest, job)
	}
	if d.live--; d.live > 0 {
		return rest
	}
	if d.keys != nil {
		rest = append(rest, d.keys.drain()...)
		for e, ok := d.ready.pop(); ok; e, ok = d.ready.pop() {
			d.keys.leave(e.job) // its key's queue was drained: this frees the key
			rest = append(rest, e.job)
		}
	}
	for job, ok := d.backlog.pop(); ok; job, ok = d.backlog.pop() {
		rest = append(rest, job)
	}
	if d.mb != nil {
		rest = append(rest, d.mb.Close()...)
	}
	list := d.first
	d.first, d.last = nil, nil
	a.refuse(list)
	return rest
}

// deadLetters delivers the dead letters of jobs that will never run, then
// counts them out.
func (d *dispatcher[T]) deadLetters(jobs []T, target string, reason error) {
	if len(jobs) == 0 {
		return
	}
	for _, job := range jobs {
		d.letter(job, target, reason)
	}
	var a after[T]
	d.mu.Lock()
	d.dropped += int64(len(jobs))
	d.held -= len(jobs)
	d.admit(&a)
	d.checkDrained()
	d.mu.Unlock()
	a.run(d)
}

// up reports whether worker i takes jobs. d.mu is held.
func (d *dispatcher[T]) up(i int) bool { return !d.workers[i].dead }

func (d *dispatcher[T]) isIdle(i int) bool { return d.idle[i/64]&(1<<(i%64)) != 0 }

func (d *dispatcher[T]) setIdle(i int) {
	d.idle[i/64] |= 1 << (i % 64)
	d.nidle++
}

func (d *dispatcher[T]) unidle(i int) {
	d.idle[i/64] &^= 1 << (i % 64)
	d.nidle--
}

// takeIdle takes the idle worker the strategy picks: the first idle one
// from where it says to start, wrapping. d.nidle > 0.
func (d *dispatcher[T]) takeIdle() *worker[T] {
	n := len(d.workers)
	start := d.strategy.firstIdle(d.cursor, n) % n
	i := -1
	if b := d.idle[start/64] & (^uint64(0) << (start % 64)); b != 0 {
		i = start/64*64 + bits.TrailingZeros64(b)
	} else {
		for k := 1; k <= len(d.idle); k++ { // the last turn rereads start's word
			word := (start/64 + k) % len(d.idle)
			if b := d.idle[word]; b != 0 {
				i = word*64 + bits.TrailingZeros64(b)
				break
			}
		}
	}
	d.unidle(i)
	if d.cursor = i + 1; d.cursor == n {
		d.cursor = 0
	}
	return &d.workers[i]
}

// queued reports the jobs waiting to be dispatched. d.mu is held.
func (d *dispatcher[T]) queued() int {
	n := d.backlog.n
	if d.mb != nil {
		n += d.mb.Len()
	}
	if d.keys != nil {
		n += d.keys.queued() + d.ready.len()
	}
	if d.pin != nil {
		for i := range d.workers {
			n += d.workers[i].own.n
		}
	}
	return n
}

// after is what a critical section leaves for once the lock is released:
// workers to wake, blocked Submits to answer (their err is set), evicted
// jobs to dead-letter, a list of blocked Submits to refuse with
// ErrNoRoutee. A section fills at most two of each slot; any more are
// served at once.
type after[T any] struct {
	wakes   [2]*worker[T]
	replies [2]*blocked[T]
	refused *blocked[T]
	drops   bool // d.evicted has jobs
	any     bool // something to do
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

func (a *after[T]) reply(w *blocked[T]) {
	a.any = true
	for i := range a.replies {
		if a.replies[i] == nil {
			a.replies[i] = w
			return
		}
	}
	w.ready <- struct{}{}
}

func (a *after[T]) refuse(list *blocked[T]) { a.refused, a.any = list, true }

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
	refuse(a.refused, ErrNoRoutee)
	if a.drops {
		d.mu.Lock()
		evicted := d.evicted
		d.evicted = nil
		d.mu.Unlock()
		d.deadLetters(evicted, "", ErrEvicted)
	}
}

// A spinMutex is a lock for critical sections of a few dozen nanoseconds,
// which the dispatcher's are. sync.Mutex parks a goroutine that finds it
// locked whenever the goroutine's processor has other goroutines to run,
// as a pool's processors always do: with 8 submitters and 8 workers on 2
// processors, that cost 190-200 ns per job against 120-130 with this lock.
// A spinMutex spins briefly, then yields the processor, and never parks;
// it must guard no blocking call.
type spinMutex struct{ state atomic.Int32 }

func (m *spinMutex) Lock() {
	if !m.state.CompareAndSwap(0, 1) {
		m.lockSlow()
	}
}

// lockSlow spins 32 times, then yields: measured, spinning longer before
// yielding cost a pool more than it saved.
func (m *spinMutex) lockSlow() {
	for {
		for range 32 {
			if m.state.Load() == 0 && m.state.CompareAndSwap(0, 1) {
				return
			}
		}
		runtime.Gosched()
	}
}

func (m *spinMutex) Unlock() { m.state.Store(0) }
