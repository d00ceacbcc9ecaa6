package crew

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
)

// ErrPoolClosed is returned by Submit and TrySubmit (as false) once Wait has
// been called, for a job that does not come from one of the pool's own jobs.
var ErrPoolClosed = errors.New("crew: pool closed")

// DefaultQueueSize is how many jobs per worker a pool with the default
// backlog holds waiting beside those running (see WithQueueSize): small,
// so that a submitter runs only a little ahead of the workers and a pool
// that fails skips little work.
const DefaultQueueSize = 2

// A Pool runs jobs of type T on a fixed set of worker goroutines that share
// one backlog. It replaces an errgroup fan-out: Submit where you would call
// Go, Wait where you would call Wait. Create one with NewPool (typed jobs
// and one handler), NewGroup (jobs are functions) or WithContext (a group
// whose context the first error cancels).
//
// Dispatch. While the backlog is empty, Submit hands a job straight to an
// idle worker (WithStrategy picks which, when several are); otherwise the
// job joins the backlog, and each worker takes the oldest job from it
// before it goes idle. So no job waits while a worker is idle, and jobs are
// dispatched in submission order: if a job has been dispatched (handed to a
// worker, or taken from the backlog), so has every job whose Submit
// returned before its Submit began. A dispatched job runs, even if the
// pool's context ends before it starts; the jobs still in the backlog when
// the pool sees its context end are skipped. So a failure never skips a job
// submitted before the one that failed, as with errgroup. Exceptions: a
// job's own Submit may run its job at once, inline (see Submit); a priority
// or Fair backlog (WithMailbox) dispatches in its own order; a keyed job
// (WithKey) waits for the job of its key before it.
//
// Bound. A pool holds at most workers×(1+DefaultQueueSize) jobs, counting
// those running (WithQueueSize changes it); Submit blocks while it is full,
// and blocked Submits take the room that opens in the order they came. A
// pool with a backlog of your own (WithMailbox) is bounded by it instead,
// unless WithQueueSize is given too; with a priority backlog, a full pool
// blocks an urgent Submit too, until a job ends.
//
// Batches. A long-lived pool serves many batches (NewBatch), each with its
// own Submit, Wait, first error and context, as an errgroup has, sharing
// the pool's workers and its bound: one pool per process caps the work of
// every request. Resize changes the number of workers while the pool runs,
// and Shutdown closes the pool with a deadline. Wait (or Shutdown) closes
// the pool to every batch too.
//
// A Pool is safe for concurrent use; the zero Pool is not usable. Its
// worker goroutines start in the constructor and end in Wait, which every
// pool must reach: a pool that is never waited for leaks its workers.
// Submit synchronizes before its job runs: the job sees every write made
// before Submit was called. The end of every job synchronizes before the
// return of Wait.
type Pool[T any] struct {
	// Set by the constructor, then only read, by every Submit and job.
	handle        func(context.Context, T) error
	isNil         func(T) bool // reports a nil job, for groups
	name          string
	ctx           context.Context // the pool's context, which jobs receive
	cancel        context.CancelCauseFunc
	cancelOnError bool
	watch         bool             // ctx's parent can end: dispatches read ctx (see seesStop)
	perWorker     int              // the bound per worker (1+queue size), or 0: Resize moves the bound with it
	sink          func(DeadLetter) // the user's dead-letter sink, or nil
	noWorker      error            // what a Submit gets once every worker has died: it names the pool and matches ErrNoRoutee

	// The dispatcher's fields change with every job: no line of theirs is
	// shared with the fields above.
	_ [64]byte
	d dispatcher[T]
	_ [64]byte

	// Written as jobs fail or run inline, read by Stats.
	failed, panicked, inline atomic.Int64

	errs       errorSet       // the jobs' errors
	waiters    sync.Pool      // of *waiter[task[T]], for blocked Submits
	goroutines sync.WaitGroup // the workers' goroutines
	resizing   sync.Mutex     // serializes Resize, and Wait's look at the workers
	unwatch    func() bool    // stops the watch of ctx that refuses the blocked Submits once it ends
	refused    chan struct{}  // closed once that watch has refused them

	waitOnce sync.Once
	result   error
}

// NewPool starts a pool of workers goroutines that call handle for each job
// submitted, one job at a time per worker. handle receives the pool's
// context: by default one that Wait cancels when it returns; WithParent
// derives it from a context of yours, and WithCancelOnError makes the first
// error cancel it.
//
// Options: WithName (the pool's name, "pool-1" by default; workers are
// name-0, name-1, ...), WithStrategy, WithMailbox (the backlog, such as a
// priority mailbox for urgent jobs first), WithQueueSize, WithKey or
// WithConsistentHash, WithParent, WithCancelOnError, WithAllErrors and
// WithDeadLetters. NewPool panics if workers is less than 1, handle is nil,
// or an option does not apply to a pool; it checks everything before it
// starts anything.
func NewPool[T any](workers int, handle func(context.Context, T) error, opts ...Option) *Pool[T] {
	if workers < 1 {
		panic("crew: NewPool: workers must be at least 1, got " + strconv.Itoa(workers))
	}
	if handle == nil {
		panic("crew: NewPool: nil handler")
	}
	o := collect(opts)
	o.only("NewPool", poolOpts)
	return newPool(workers, handle, &o)
}

var poolSeq atomic.Int64

// newPool checks the options that depend on T, then starts the pool.
func newPool[T any](n int, handle func(context.Context, T) error, o *options) *Pool[T] {
	p := &Pool[T]{
		handle:        handle,
		name:          o.name,
		cancelOnError: o.cancelOnError,
		errs:          errorSet{all: o.allErrors},
		sink:          o.deadLetters,
		refused:       make(chan struct{}),
	}
	d := &p.d
	if o.keyed != nil {
		d.keys, d.pin = keyedFor[T](o, "pool", "jobs")
	}
	if o.newMailbox != nil {
		f, ok := o.newMailbox.(func() Mailbox[T])
		if !ok {
			panic(fmt.Sprintf("crew: WithMailbox: a %T does not make mailboxes for %T jobs", o.newMailbox, *new(T)))
		}
		d.own.mb = made(f())
		if dr, ok := d.own.mb.(Dropper[T]); ok {
			// The hook runs inside Enqueue, under the dispatcher's lock:
			// keep the job for its dead letter, delivered once the lock is
			// released (see evictions).
			dr.OnDrop(func(job T, _ error) { d.own.evicted = append(d.own.evicted, job) })
		}
	}
	if p.name == "" {
		p.name = "pool-" + strconv.FormatInt(poolSeq.Add(1), 10)
	}
	p.noWorker = &noWorkerError{pool: p.name}
	parent := o.parent
	if parent == nil {
		parent = context.Background()
	}
	p.watch = parent.Done() != nil
	p.ctx, p.cancel = context.WithCancelCause(parent)
	d.idle.strategy = o.strategy
	if d.idle.strategy == nil {
		d.idle.strategy = SmallestMailbox()
	}
	switch {
	case o.queueSize > 0:
		p.perWorker = 1 + min(o.queueSize, math.MaxInt/maxWorkers-1) // no overflow
	case d.own.mb == nil && o.keyed == nil:
		p.perWorker = 1 + DefaultQueueSize
	}
	d.own.q.bufs = shared[slabs[prioItem[T]]]()
	d.limit = n * p.perWorker
	d.live = n
	d.idle.bits = make([]uint64, (n+63)/64)
	d.workers = make([]*worker[T], n)
	for i := range d.workers {
		d.workers[i] = newWorker(p, i)
	}
	for _, w := range d.workers {
		w.start()
	}
	p.unwatch = context.AfterFunc(p.ctx, p.refuseAll)
	return p
}

// maxWorkers is the most workers a pool may have.
const maxWorkers = 1 << 24

// Submit gives job to the pool and returns nil once the pool holds it: it
// does not wait for the job to run, Wait does. The job runs with the pool's
// context, not ctx: ctx only bounds the wait for room. Submit hands the job
// to an idle worker, or queues it in the backlog (see Pool for the order).
//
// Submit blocks only while the pool is full, and blocked Submits take the
// room that opens in the order they came. It returns ctx.Err() if ctx ends
// first, or at once if ctx is already done; the pool context's Err() once
// that context is done (after the first error of a WithContext group, say),
// since the job would not run; ErrPoolClosed once Wait has begun, also to a
// Submit blocked at that moment; and ErrNoRoutee if every worker has died
// (a job ends its worker by calling runtime.Goexit). With a backlog of your
// own (WithMailbox), Submit returns what a Fail or DropNewest mailbox
// returns when it refuses the job (ErrMailboxFull, ErrDropped), which
// happens only when no worker is idle, and waits while a Backpressure one
// is full. It does not allocate in steady traffic.
//
// A job may submit more jobs to its own pool by calling Submit with the
// context it received (or one derived from it), while it runs. Such a
// Submit never blocks: when the pool is full it runs the new job itself,
// inline, before it returns, so that jobs waiting for room held by jobs
// waiting for room cannot deadlock the pool (a keyed pool, WithKey or
// WithConsistentHash, queues the job beyond its bound instead, to keep its
// key's order). It is also accepted after Wait began, which then waits for
// it too, as errgroup's Wait does for a Go called by a goroutine of the
// group. A Submit from a job with another context blocks like any other
// and can deadlock a full pool; so does a batch's job that submits to the
// pool rather than to its batch (see Batch.Submit). Submit panics if ctx is
// nil.
func (p *Pool[T]) Submit(ctx context.Context, job T) error {
	if ctx == nil {
		panic("crew: Submit: nil context")
	}
	if p.isNil != nil && p.isNil(job) {
		panic("crew: Submit: nil job")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return p.submit(ctx, task[T]{job: job, f: &p.d.own})
}

// submit is Submit's and Batch.Submit's: it offers t to the dispatcher, and
// waits for room if the pool is full, unless t comes from a job of its
// flow (then it runs t inline).
func (p *Pool[T]) submit(ctx context.Context, t task[T]) error {
	var a after[T]
	v, w, err := p.d.offer(t, mayWait, &p.waiters, p.seesStop(), &a)
	a.run(p)
	switch v {
	case accepted:
		return nil
	case noWaiter: // the first Submit to block on this processor: make it a waiter, and offer again
		p.waiters.Put(&waiter[task[T]]{ready: make(chan struct{}, 1)})
		return p.submit(ctx, t)
	case waiting, shut, batchShut:
		if !p.own(ctx, t.f.batch) {
			break
		}
		// A job's own Submit never waits, and is let in after Wait began:
		// its job is not new. Rare enough to take a queued Submit back out.
		if v == waiting {
			if decided, err := p.withdraw(w); decided && err != ErrPoolClosed && err != ErrBatchClosed {
				return err // the pool decided first, and not as for a new job
			}
		}
		return p.submitOwn(ctx, t)
	}
	if v == waiting {
		return p.await(ctx, w)
	}
	return p.refusal(v, err, t.f.batch)
}

// submitOwn is the Submit of a job that a job of the pool (or of t's batch)
// submits with its context, which never waits: on a full pool it runs the
// job inline.
func (p *Pool[T]) submitOwn(ctx context.Context, t task[T]) error {
	var a after[T]
	v, _, err := p.d.offer(t, fromJob, nil, p.seesStop(), &a)
	a.run(p)
	if v != full {
		return p.refusal(v, err, t.f.batch)
	}
	if b := t.f.batch; b != nil {
		b.runInline(t.job)
	} else {
		p.caller(ctx).runInline(t.job)
	}
	return nil
}

// await blocks a Submit queued as w until the pool accepts or refuses its
// job (refusing it once Wait begins or the pool's context ends), or ctx
// ends first.
func (p *Pool[T]) await(ctx context.Context, w *waiter[task[T]]) error {
	done := ctx.Done()
	if done == nil { // a context that never ends: a receive costs less than a select
		err := w.outcome()
		p.waiters.Put(w)
		return err
	}
	select {
	case <-done:
		if decided, err := p.withdraw(w); decided {
			return err
		}
		return ctx.Err()
	case <-w.ready:
		err := w.err
		w.err = nil
		p.waiters.Put(w)
		return err
	}
}

// withdraw takes the blocked Submit w back, unless the pool answered it
// first: then it reports decided, with the answer. Either way w goes back
// to the pool's waiters.
func (p *Pool[T]) withdraw(w *waiter[task[T]]) (decided bool, err error) {
	if !p.d.withdraw(w) {
		decided, err = true, w.outcome()
	}
	p.waiters.Put(w)
	return decided, err
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
		return ctxErr(p.ctx)
	case noWorker:
		return p.noWorker
	case batchShut:
		return ErrBatchClosed
	case batchEnded:
		return b.ctxErr()
	}
	return err
}

// ctxErr returns ctx.Err(), or context.Canceled while ctx is being
// canceled: its cancellation runs after the dispatcher's lock that
// stopped dispatching is released.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return context.Canceled
}

// seesStop returns the cause of the pool context's end if the context can
// end by its parent and has, else nil: a dispatch reads it before it takes
// the dispatcher's lock (a read under the lock would cost the holder a
// cache line it should not wait for), and the dispatcher records it (see
// dispatcher.stop). The pool's own cancellations record theirs as they
// cancel.
func (p *Pool[T]) seesStop() error {
	if p.watch && p.ctx.Err() != nil {
		return context.Cause(p.ctx)
	}
	return nil
}

// TrySubmit gives job to the pool if it has room right now, without
// blocking, and reports whether it did, like errgroup's TryGo. It returns
// false when the pool is full (or its backlog mailbox refuses the job),
// closed by Wait, or its context is done.
func (p *Pool[T]) TrySubmit(job T) bool {
	if p.isNil != nil && p.isNil(job) {
		panic("crew: TrySubmit: nil job")
	}
	return p.trySubmit(task[T]{job: job, f: &p.d.own})
}

func (p *Pool[T]) trySubmit(t task[T]) bool {
	var a after[T]
	v, _, _ := p.d.offer(t, noWait, nil, p.seesStop(), &a)
	a.run(p)
	return v == accepted
}

// caller returns the worker whose job handed out ctx, if it is one of p's.
func (p *Pool[T]) caller(ctx context.Context) *worker[T] {
	if w, ok := ctx.Value(workerKey{}).(*worker[T]); ok && w.pool == p {
		return w
	}
	return nil
}

// own reports whether ctx was handed out by a job of batch b, or of the
// pool itself if b is nil: whether a Submit with it is a job's own.
func (p *Pool[T]) own(ctx context.Context, b *Batch[T]) bool {
	if b != nil {
		return ctx.Value(workerKey{}) == any(b)
	}
	return p.caller(ctx) != nil
}

// Wait closes the pool to new jobs, waits until every accepted job has run
// (or been skipped, once the pool's context is done), stops the workers and
// waits for their goroutines to exit, cancels the pool's context, and
// returns the first error a job returned or raised (a panic, as an error
// that errors.As unwraps to *panics.ErrRecovered, with its stack; a
// runtime.Goexit, as an error that says so). With WithAllErrors it returns
// every error, joined. If jobs were skipped because the pool's context
// ended and none failed, it returns the context's cause, so that a pool
// never reports success for jobs its context kept from running. The jobs a
// DropOldest backlog evicts are dead letters, counted in Stats.Dropped, not
// errors.
//
// Wait may be called more than once, from any goroutine but the pool's own
// jobs (which would wait for themselves); every call returns the same.
func (p *Pool[T]) Wait() error {
	if p.refused == nil {
		panic("crew: Wait: the Pool was not made by NewPool, NewGroup or WithContext")
	}
	p.waitOnce.Do(func() {
		<-p.close()
		if !p.unwatch() {
			<-p.refused // the context ended: refuseAll ran, or runs
		}
		p.resizing.Lock() // Resize does nothing once the pool is closed: the workers stay as they are
		defer p.resizing.Unlock()
		for _, w := range p.d.stopping() {
			close(w.jobs) // it exits once it finds its channel closed; a dead one has
		}
		p.goroutines.Wait()
		p.result = p.outcome()
		p.cancel(nil)
	})
	return p.result
}

// close closes the pool to new jobs, refusing the blocked Submits, and
// returns a channel closed once no job is held.
func (p *Pool[T]) close() <-chan struct{} {
	list, drained := p.d.close(make(chan struct{}))
	refuse(list, ErrPoolClosed) // their jobs are new: refuse them
	return drained
}

// refuseAll answers every blocked Submit with the pool context's error,
// once that context is done; context.AfterFunc runs it.
func (p *Pool[T]) refuseAll() {
	defer close(p.refused)
	refuse(p.d.stopAll(context.Cause(p.ctx)), p.ctx.Err())
}

// outcome is what Wait returns.
func (p *Pool[T]) outcome() error {
	if err := p.errs.result(); err != nil {
		return err
	}
	if p.d.skippedOwn() {
		return context.Cause(p.ctx)
	}
	return nil
}

// record keeps err, a job's of the pool, for Wait and, if it is the first
// and the pool cancels on error, cancels the pool's context with it, once
// dispatching stopped.
func (p *Pool[T]) record(err error) {
	if p.errs.add(err, p.ctx) && p.cancelOnError {
		p.stop(err)
	}
}

// stop stops dispatching, then cancels the pool's context with cause: no
// dispatch runs a job after a job could see the context end. The blocked
// Submits are refused with the context's error.
func (p *Pool[T]) stop(cause error) {
	list := p.d.stopAll(cause)
	p.cancel(cause)
	refuse(list, p.ctx.Err())
}

// fail records the error of a job of batch b, or of the pool if b is nil.
func (p *Pool[T]) fail(err error, b *Batch[T]) {
	p.failed.Add(1)
	var pe *panicError
	if errors.As(err, &pe) {
		p.panicked.Add(1)
	}
	if b != nil {
		b.record(err)
		return
	}
	p.record(err)
}

// deadLetters delivers the dead letters of jobs that will never run, left
// with target, then counts them out.
func (p *Pool[T]) deadLetters(tasks []task[T], target string, reason error) {
	if len(tasks) == 0 {
		return
	}
	defer func() { // also if a sink calls runtime.Goexit: its jobs are gone either way
		var a after[T]
		p.d.lost(tasks, &a)
		a.run(p)
	}()
	for _, t := range tasks {
		sink := p.sink
		if b := t.f.batch; b != nil {
			sink = b.sink
		}
		d := DeadLetter{Message: t.job, Target: target, Reason: reason}
		if sink != nil {
			sink(d)
		} else {
			logDeadLetter(d)
		}
	}
}

// evictions delivers the dead letters of the jobs the backlog mailbox
// evicted.
func (p *Pool[T]) evictions() {
	jobs := p.d.takeEvicted()
	tasks := make([]task[T], len(jobs))
	for i, job := range jobs {
		tasks[i] = task[T]{job: job, f: &p.d.own}
	}
	p.deadLetters(tasks, p.name, ErrEvicted)
}

// Context returns the pool's context: the one its jobs receive.
func (p *Pool[T]) Context() context.Context { return p.ctx }

// Name reports the pool's name (see WithName).
func (p *Pool[T]) Name() string { return p.name }
