package crew

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
)

// ErrPoolClosed is returned by Submit and TrySubmit (as false) once Wait has
// been called, for a job that does not come from one of the pool's own jobs.
var ErrPoolClosed = errors.New("crew: pool closed")

// A Job is the unit of work of a group (NewGroup, WithContext): a function
// that receives the pool's context and reports failure as an error.
type Job = func(context.Context) error

// DefaultQueueSize is how many jobs each worker of a pool with the default
// mailbox may hold waiting beside the one it runs (see WithQueueSize): small,
// so that a burst of jobs spreads over the workers as it would through one
// shared queue, instead of piling up behind a slow job.
const DefaultQueueSize = 2

// A Pool runs jobs of type T on a fixed set of worker goroutines, each an
// actor with its own mailbox, and sends each job to the worker its strategy
// picks (SmallestMailbox by default: the least loaded one). It replaces an
// errgroup fan-out: Submit where you would call Go, Wait where you would call
// Wait. Create one with NewPool (typed jobs and one handler), NewGroup (jobs
// are functions) or WithContext (a group whose context the first error
// cancels).
//
// A Pool is safe for concurrent use. Its worker goroutines start in the
// constructor and end in Wait, which every pool must reach: a pool that is
// never waited for leaks its workers.
//
// With the default mailbox each worker holds at most DefaultQueueSize jobs
// waiting beside the one it runs (WithQueueSize changes it); Submit blocks
// while every worker is that full and takes the first room that opens in
// any worker. A pool given its own mailbox (WithMailbox) leaves the bound to
// that mailbox unless WithQueueSize is given too.
//
// A worker that runs out of jobs takes the jobs queued for busy workers
// before it sleeps. With SmallestMailbox, which sends a job to an idle
// worker whenever there is one, no job waits behind a slow one while a
// worker is idle; RoundRobin and Random may still queue a job behind a slow
// one while another worker sleeps, until some worker runs dry.
type Pool[T any] struct {
	// closed is set once Wait began. Submit reads it after it counted a job
	// in at a worker, and Wait sets it before it sums the workers' loads, so
	// that a job is either refused or seen by Wait (both sequentially
	// consistent). It shares its cache line with nwait, which changes only
	// when a Submit blocks, and moves, which changes only after Wait began:
	// the line every job's end reads stays in every core's cache.
	closed atomic.Bool
	nwait  atomic.Int32 // len(waiters), read without the lock
	// moves counts the jobs whose count moved from one worker's load to
	// another's after Wait began (a steal, a job's own Submit): Wait reads
	// the loads one by one, and a move between two reads could hide a job
	// from the sum; a sum of zero counts only if moves did not change.
	moves atomic.Uint64
	_     [48]byte

	// A job is counted in its worker's load (queued + in flight) from Submit
	// to its end: the pool keeps no counter of its own that Submit and the
	// workers would both write for every job. perWorker caps each load.
	perWorker int64 // 1 + queue size; 0: no cap of the pool's own

	// A keyed pool (WithKey, WithConsistentHash) places each job by its
	// key under keyMu and counts its jobs as a whole in kpending (capped at
	// kcap if WithQueueSize gave one), since a key's worker is not the
	// pool's to choose; Wait reads kpending.
	keys     keyer[T]
	keyMu    sync.Mutex
	kpending atomic.Int64
	kcap     int64
	up       func(int) bool  // whether worker i takes jobs, for keys
	score    func(int) int64 // worker i's load, for keys
	workers  []worker[T]
	picker   Picker
	handle   func(context.Context, T) error
	isNil    func(T) bool // reports a nil job, for groups
	custom   bool         // the mailboxes come from WithMailbox
	started  atomic.Bool  // every worker's ref is set, so workers may steal
	name     string

	ctx           context.Context // the pool's context, which jobs receive
	cancel        context.CancelCauseFunc
	cancelOnError bool
	allErrors     bool
	sink          func(DeadLetter) // the user's dead-letter sink, or nil
	dropped       atomic.Int64     // jobs a mailbox or a dying worker discarded

	mu      sync.Mutex // guards waiters, err and errs
	waiters []*blocked // Submits blocked on a full pool, in arrival order
	err     error      // the first error
	errs    []error    // every error, with WithAllErrors

	waitOnce sync.Once
	settled  chan struct{} // cap 1: poked when a load drops after Wait began
	result   error
}

// NewPool starts a pool of workers goroutines that call handle for each job
// submitted, one job at a time per worker. handle receives the pool's
// context: by default one that Wait cancels when it returns; WithParent
// derives it from a context of yours, and WithCancelOnError makes the first
// error cancel it. Any mailbox works (WithMailbox), such as a priority
// mailbox for urgent jobs first.
//
// Options: WithName (the pool's name, "pool-1" by default; workers are
// name-0, name-1, ...), WithStrategy, WithMailbox, WithQueueSize,
// WithParent, WithCancelOnError, WithAllErrors and WithDeadLetters.
// NewPool panics if workers is less than 1 or handle is nil.
func NewPool[T any](workers int, handle func(context.Context, T) error, opts ...Option) *Pool[T] {
	if workers < 1 {
		panic("crew: NewPool: workers must be at least 1, got " + strconv.Itoa(workers))
	}
	if handle == nil {
		panic("crew: NewPool: nil handler")
	}
	o := collect(opts)
	return newPool(workers, handle, &o)
}

// NewGroup starts a pool of workers goroutines whose jobs are functions, as
// errgroup's are. See NewPool for the options. Submit panics on a nil job.
func NewGroup(workers int, opts ...Option) *Pool[Job] {
	if workers < 1 {
		panic("crew: NewGroup: workers must be at least 1, got " + strconv.Itoa(workers))
	}
	o := collect(opts)
	p := newPool(workers, runJob, &o)
	p.isNil = func(j Job) bool { return j == nil }
	return p
}

func runJob(ctx context.Context, j Job) error { return j(ctx) }

// WithContext starts a group, as NewGroup does, whose context derives from
// ctx and is canceled, with the first error as its cause, by the first job
// that fails, or when Wait returns, whichever comes first. It returns the
// group and that context, which jobs also receive. It is errgroup's
// WithContext with a limit of workers goroutines.
func WithContext(ctx context.Context, workers int, opts ...Option) (*Pool[Job], context.Context) {
	if ctx == nil {
		panic("crew: WithContext: nil context")
	}
	opts = append([]Option{WithParent(ctx), WithCancelOnError()}, opts...)
	p := NewGroup(workers, opts...)
	return p, p.ctx
}

var poolSeq atomic.Int64

func newPool[T any](n int, handle func(context.Context, T) error, o *options) *Pool[T] {
	parent := o.parent
	if parent == nil {
		parent = context.Background()
	}
	p := &Pool[T]{
		handle:        handle,
		name:          o.name,
		cancelOnError: o.cancelOnError,
		allErrors:     o.allErrors,
		sink:          o.deadLetters,
		workers:       make([]worker[T], n),
		settled:       make(chan struct{}, 1),
		custom:        o.newMailbox != nil,
	}
	if p.name == "" {
		p.name = "pool-" + strconv.FormatInt(poolSeq.Add(1), 10)
	}
	p.ctx, p.cancel = context.WithCancelCause(parent)
	switch {
	case o.queueSize > 0:
		p.perWorker = 1 + int64(o.queueSize)
	case o.newMailbox == nil:
		p.perWorker = 1 + DefaultQueueSize
	}
	if o.keyed != nil {
		k := keyerFor[T](o, n, "pool", "jobs")
		// A key's jobs wait for each other: a bound would let a hot key's
		// backlog block every Submit, so a keyed pool has none unless
		// WithQueueSize sets one for the pool as a whole.
		p.keys, p.perWorker = k, 0
		if o.queueSize > 0 {
			p.kcap = int64(n) * int64(1+o.queueSize)
		}
		p.up = func(i int) bool { return !p.workers[i].ref.stopped.Load() }
		p.score = func(i int) int64 { return p.workers[i].ref.load.Load() }
	}
	s := o.strategy
	if s == nil {
		s = SmallestMailbox()
	}
	wo := *o
	wo.deadLetters = p.deadLetter
	wo.onError = p.workerError
	wo.pooled = true
	p.picker = Picker{strategy: s, slots: make([]slot, n)}
	for i := range p.workers {
		w := &p.workers[i]
		w.pool = p
		w.ctx = context.WithValue(p.ctx, workerKey{}, w)
		w.index = i
		wo.labels = []string{"crew.pool", p.name, "crew.worker", strconv.Itoa(i)}
		wo.idle = w.steal
		if p.keys != nil {
			wo.idle = nil // taking another worker's job would break key order
		}
		// The actor's own context never ends: the pool stops its workers in
		// Wait, after the last job, and handles its own context's end by
		// skipping jobs (see run), so that every accepted job is accounted.
		w.ref = spawn(context.Background(), w.run, &wo, p.name+"-"+strconv.Itoa(i))
		p.picker.slots[i] = newSlot(w.ref)
	}
	p.started.Store(true) // publishes the workers to steal
	return p
}

// Submit sends job to the worker the strategy picks. It returns nil once the
// job is queued (or has run, see below); it does not wait for the job to
// finish: Wait does. The job will run with the pool's context, not ctx:
// ctx only bounds the wait for room.
//
// Submit blocks only while the pool is full, and then takes the first room
// that opens in any worker, in the order the blocked Submits arrived. It
// returns ctx.Err() if ctx ends first, or at once if ctx is already done;
// the pool context's Err() once that context is done (after the first error
// of a WithContext group, say), since the job would not run; and
// ErrPoolClosed once Wait has begun, also to a Submit blocked at that
// moment; ErrNoRoutee if every worker has died (a job ends its worker by
// calling runtime.Goexit). With a mailbox of your own (WithMailbox) and no
// WithQueueSize, the mailbox decides: Submit returns what a Fail or
// DropNewest mailbox returns when every worker's is full (ErrMailboxFull,
// ErrDropped), and blocks in a Backpressure one, where ctx still bounds the
// wait but Wait does not refuse it: its job is accepted when room opens. It
// does not allocate in steady traffic.
//
// A job may submit more jobs to its own pool by calling Submit with the
// context it received (or one derived from it). Such a Submit never blocks:
// when the pool is full it runs the new job itself, inline, before it
// returns, so that jobs waiting for room held by jobs waiting for room
// cannot deadlock the pool. It is also accepted after Wait began, which
// then waits for it too, as errgroup's Wait does for a Go called by a
// goroutine of the group. A Submit from a job with another context blocks
// like any other and can deadlock a full pool.
func (p *Pool[T]) Submit(ctx context.Context, job T) error {
	if p.isNil != nil && p.isNil(job) {
		panic("crew: Submit: nil job")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := p.ctx.Err(); err != nil {
		if p.closed.Load() {
			return ErrPoolClosed // Wait canceled the context on its way out
		}
		return err
	}
	// A job's own Submit must never block: with a mailbox of the user's,
	// which may block in Enqueue, look for it at once; otherwise only when
	// the pool is full or closed.
	var own *worker[T]
	if p.custom {
		own = p.caller(ctx)
	}
	i := full
	if p.nwait.Load() == 0 { // blocked Submits go first
		i = p.reserve()
	}
	if i == full {
		if own == nil {
			own = p.caller(ctx)
		}
		switch {
		case own != nil:
			// It may jump the queue: the job holding its room is running.
			if i = p.reserve(); i == full {
				if p.keys == nil {
					own.runInline(job)
					return nil
				}
				// Inline would run it before its key's queued jobs:
				// queue it beyond the bound instead.
				p.kpending.Add(1)
				i = 0
			}
		case p.closed.Load():
			return ErrPoolClosed
		default:
			var err error
			if i, err = p.await(ctx); err != nil {
				return err
			}
		}
	}
	if p.closed.Load() {
		if own == nil {
			own = p.caller(ctx)
		}
		if own == nil {
			if i >= 0 {
				p.unreserve(i)
			}
			return ErrPoolClosed // Wait began meanwhile: the job is new
		}
		// A job's own job, counted in before its parent ends: Wait must
		// not sum the parent's worker after the end and this one before.
		p.moves.Add(1)
	}
	return p.send(ctx, i, job, own)
}

// TrySubmit queues job if there is room right now, without blocking, and
// reports whether it did, like errgroup's TryGo. It returns false when the
// pool is full (a mailbox of the pool's choosing would have to block or
// refuse), closed by Wait, or its context is done.
func (p *Pool[T]) TrySubmit(job T) bool {
	if p.isNil != nil && p.isNil(job) {
		panic("crew: TrySubmit: nil job")
	}
	if p.ctx.Err() != nil || p.closed.Load() || p.nwait.Load() > 0 {
		return false
	}
	i := p.reserve()
	if i == full {
		return false
	}
	if p.closed.Load() {
		if i >= 0 {
			p.unreserve(i)
		}
		return false
	}
	return p.send(canceledCtx, i, job, nil) == nil
}

// canceledCtx makes a Backpressure mailbox's Enqueue return at once when it
// is full, instead of blocking.
var canceledCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// What reserve returns instead of a worker's index.
const (
	full   = -1 // every live worker is at its cap
	noneUp = -2 // every worker has stopped (its jobs called runtime.Goexit)
)

// reserve counts a job in at the worker the strategy picks, or, if that one
// is at its cap, at the next one with room, and returns its index.
func (p *Pool[T]) reserve() int {
	if p.keys != nil {
		return p.enterKeyed()
	}
	i := p.picker.Pick()
	if i < 0 {
		return noneUp
	}
	if p.perWorker == 0 {
		p.workers[i].ref.load.Add(1)
		return i
	}
	if p.take(i) {
		return i
	}
	n := len(p.workers)
	for k := 1; k < n; k++ {
		j := i + k
		if j >= n {
			j -= n
		}
		if !p.workers[j].ref.stopped.Load() && p.take(j) {
			return j
		}
	}
	return full
}

// enterKeyed counts a job in to a keyed pool if it is under its cap, and
// returns 0: the job's worker is chosen by its key, in sendKeyed.
func (p *Pool[T]) enterKeyed() int {
	if p.kcap == 0 {
		p.kpending.Add(1)
		return 0
	}
	for {
		n := p.kpending.Load()
		if n >= p.kcap {
			return full
		}
		if p.kpending.CompareAndSwap(n, n+1) {
			return 0
		}
	}
}

// take counts a job in at worker i if its load is under the cap.
func (p *Pool[T]) take(i int) bool {
	load := &p.workers[i].ref.load
	for {
		l := load.Load()
		if l >= p.perWorker {
			return false
		}
		if load.CompareAndSwap(l, l+1) {
			return true
		}
	}
}

// unreserve counts out a job reserve counted in and that will not be sent.
func (p *Pool[T]) unreserve(i int) {
	if p.keys != nil {
		p.kpending.Add(-1)
	} else {
		p.workers[i].ref.load.Add(-1)
	}
	p.settle()
}

// caller returns the worker whose job handed out ctx, if it is one of p's.
func (p *Pool[T]) caller(ctx context.Context) *worker[T] {
	if w, ok := ctx.Value(workerKey{}).(*worker[T]); ok && w.pool == p {
		return w
	}
	return nil
}

// send queues a job counted in at worker i (or noneUp). own is the calling
// worker when the job comes from one of the pool's jobs: a full mailbox
// then makes it run the job inline rather than block (only a pool without a
// cap of its own gets that far).
func (p *Pool[T]) send(ctx context.Context, i int, job T, own *worker[T]) error {
	if p.keys != nil {
		return p.sendKeyed(job)
	}
	if own != nil {
		ctx = canceledCtx
	}
	for range len(p.workers) {
		if i == noneUp {
			break
		}
		err := p.workers[i].ref.push(ctx, job)
		if err == nil {
			return nil
		}
		p.settle() // push counted the job out
		switch {
		case err == ErrStopped:
			// The worker died (runtime.Goexit in a job): count in elsewhere.
			if i = p.reserve(); i == full {
				if i = p.picker.Pick(); i < 0 {
					i = noneUp // the last live worker just died
				} else {
					p.workers[i].ref.load.Add(1) // over the cap, once
				}
			}
			continue
		case own != nil && (err == context.Canceled || errors.Is(err, ErrMailboxFull)):
			own.runInline(job)
			return nil
		}
		return err
	}
	return ErrNoRoutee
}

// sendKeyed queues a job counted in to a keyed pool at its key's worker.
// Placement and queueing happen under keyMu, so that a key's jobs reach
// their worker's mailbox (unbounded, never blocking) in the order their
// Submits took the lock.
func (p *Pool[T]) sendKeyed(job T) error {
	p.keyMu.Lock()
	i := p.keys.place(job, len(p.workers), p.up, p.score)
	if i < 0 {
		p.keyMu.Unlock()
		p.kpending.Add(-1)
		p.settle()
		return ErrNoRoutee
	}
	r := p.workers[i].ref
	r.load.Add(1)
	err := r.push(context.Background(), job)
	if err != nil {
		p.keys.release(job) // push counted it out of the load
	}
	p.keyMu.Unlock()
	if err != nil {
		p.kpending.Add(-1)
		p.settle()
	}
	return err
}

// A blocked is a Submit waiting for room. ready (cap 1) receives the index
// of the worker where the pool counted its job in, full once Wait began, or
// noneUp once no worker is left.
type blocked struct{ ready chan int }

var blockedPool = sync.Pool{New: func() any { return &blocked{ready: make(chan int, 1)} }}

// await blocks until a job that ends hands its room to this Submit, and
// returns the worker where the job is counted in; or until ctx or the
// pool's context ends, or Wait begins.
func (p *Pool[T]) await(ctx context.Context) (int, error) {
	b := blockedPool.Get().(*blocked)
	p.mu.Lock()
	if p.closed.Load() {
		p.mu.Unlock()
		blockedPool.Put(b)
		return 0, ErrPoolClosed
	}
	p.waiters = append(p.waiters, b)
	// Raise nwait before looking for room: a job that ended before this saw
	// nwait == 0 and handed its room to no one, so take it here. The job's
	// decrement and nwait are both sequentially consistent, so either it
	// sees this waiter or grant below sees its room.
	p.nwait.Add(1)
	p.grant()
	p.mu.Unlock()
	select {
	case i := <-b.ready:
		blockedPool.Put(b)
		switch i {
		case full:
			return 0, ErrPoolClosed
		case noneUp:
			return 0, ErrNoRoutee
		}
		return i, nil
	case <-ctx.Done():
	case <-p.ctx.Done():
	}
	p.mu.Lock()
	k := slices.Index(p.waiters, b)
	if k >= 0 {
		p.waiters = slices.Delete(p.waiters, k, k+1)
		p.nwait.Add(-1)
	}
	p.mu.Unlock()
	if k < 0 {
		if i := <-b.ready; i >= 0 {
			p.unreserve(i) // granted meanwhile: give the room back
		}
	}
	blockedPool.Put(b)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return 0, p.ctx.Err()
}

// grant hands free room to the blocked Submits, first come first served.
// p.mu is held.
func (p *Pool[T]) grant() {
	for len(p.waiters) > 0 {
		i := p.reserve()
		if i == full {
			return
		}
		// A room, or noneUp: every worker died, and no room will open.
		b := p.waiters[0]
		// Shift rather than reslice: the array keeps its capacity, so a
		// Submit that blocks again does not grow a new one.
		n := copy(p.waiters, p.waiters[1:])
		p.waiters[n] = nil
		p.waiters = p.waiters[:n]
		p.nwait.Add(-1)
		b.ready <- i
	}
}

// settle follows every drop of a worker's load: it hands the room to a
// blocked Submit, if any, and tells Wait, once it began, to count again.
func (p *Pool[T]) settle() {
	if p.nwait.Load() > 0 {
		p.mu.Lock()
		p.grant()
		p.mu.Unlock()
	}
	if p.closed.Load() {
		select {
		case p.settled <- struct{}{}:
		default:
		}
	}
}

// pending sums the workers' loads: the jobs accepted and not finished.
func (p *Pool[T]) pending() int64 {
	if p.keys != nil {
		return p.kpending.Load()
	}
	var n int64
	for i := range p.workers {
		n += p.workers[i].ref.load.Load()
	}
	return n
}

// Wait closes the pool to new jobs, waits until every accepted job has run
// (or been skipped, once the pool's context is done), stops the workers and
// waits for their goroutines to exit, cancels the pool's context, and
// returns the first error a job returned or raised (a panic, as an error
// that errors.As unwraps to *panics.ErrRecovered, with its stack). With
// WithAllErrors it returns every error, joined. If the pool's context ended
// and jobs were skipped but none failed, it returns the context's cause, so
// that a pool never reports success for jobs that did not run.
//
// Wait may be called more than once, from any goroutine but the pool's own
// jobs (which would wait for themselves); every call returns the same.
func (p *Pool[T]) Wait() error {
	p.waitOnce.Do(func() {
		p.closed.Store(true)
		p.mu.Lock()
		for _, b := range p.waiters {
			b.ready <- full // a blocked Submit's job is new: refuse it
		}
		p.waiters = nil
		p.nwait.Store(0)
		p.mu.Unlock()
		// Every job ends with its worker's load dropping, then settle; the
		// jobs' own Submits may still add some meanwhile.
		for {
			moves := p.moves.Load()
			if p.pending() == 0 {
				if p.moves.Load() == moves {
					break
				}
				continue // a job moved while the loads were read: read again
			}
			<-p.settled
		}
		for i := range p.workers {
			p.workers[i].ref.Stop() // their mailboxes are empty
		}
		for i := range p.workers {
			<-p.workers[i].ref.Done()
		}
		p.result = p.outcome()
		p.cancel(nil)
	})
	return p.result
}

// outcome is what Wait returns.
func (p *Pool[T]) outcome() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.allErrors && len(p.errs) > 0 {
		return errors.Join(p.errs...)
	}
	if p.err != nil {
		return p.err
	}
	for i := range p.workers {
		if p.workers[i].canceled.Load() > 0 {
			return context.Cause(p.ctx)
		}
	}
	return nil
}

// Context returns the pool's context: the one its jobs receive.
func (p *Pool[T]) Context() context.Context { return p.ctx }

// Name reports the pool's name (see WithName).
func (p *Pool[T]) Name() string { return p.name }
