package crew

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
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
// (WithKey) waits for the job of its key before it; a pool WithFairShare
// keeps submission order within each share only (see WithFairShare).
//
// Bound. A pool holds at most workers×(1+DefaultQueueSize) jobs, counting
// those running (WithQueueSize changes it); Submit blocks while it is full,
// and blocked Submits take the room that opens in the order they came
// (WithFairShare: share by share, in turn, each share's in order). A
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
// A Pool is safe for concurrent use; the zero Pool is not usable (every
// method panics, with a message that names the constructors). Its
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
	onError       func(error)      // WithErrorHandler, or nil
	noRecovery    bool             // WithoutPanicRecovery: a job's panic is not recovered
	noWorker      error            // what a Submit gets once every worker has died: it names the pool and matches ErrNoRoutee
	rec           Recorder         // WithMetrics: where the pool reports, or nil
	stamp         bool             // WithMetrics, and no backlog mailbox (which keeps no time): Submit stamps its job with when it was accepted
	epoch         time.Time        // what clock reads from

	// The dispatcher's fields change with every job: no line of theirs is
	// shared with the fields above.
	_ [64]byte
	d dispatcher[T]
	_ [64]byte

	// Written as jobs fail or run inline, read by Stats.
	failed, panicked, inline atomic.Int64
	submits                  atomic.Int64 // WithMetrics: Submits under way; and closing once Wait stopped every worker (see closeMetrics)

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
// WithConsistentHash, WithParent, WithCancelOnError, WithAllErrors,
// WithDeadLetters, WithFairShare (batches share the workers by run time),
// WithErrorHandler (each job's error as it happens), WithMetrics (counts,
// queue waits and run times as they happen) and WithoutPanicRecovery.
// NewPool panics if workers is not between 1 and 1<<24, handle is nil, or
// an option does not apply to a pool; it checks everything before it
// starts anything.
func NewPool[T any](workers int, handle func(context.Context, T) error, opts ...Option) *Pool[T] {
	checkWorkers("NewPool", workers)
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
		onError:       o.onError,
		noRecovery:    o.noRecovery,
		refused:       make(chan struct{}),
	}
	d := &p.d
	if o.fairShare && (o.keyed != nil || o.newMailbox != nil) {
		panic("crew: WithFairShare shares the workers between batches, and a pool with WithKey, WithConsistentHash or WithMailbox takes none")
	}
	d.order = newOrder[T]()
	if o.fairShare {
		d.fair = newFairness(&d.own)
	}
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
	p.epoch = time.Now()
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
	d.own.q.bufs = shared[slabs[waitingJob[T]]]()
	d.limit = n * p.perWorker
	d.live = n
	d.idle.bits = make([]uint64, (n+63)/64)
	d.workers = make([]*worker[T], n)
	for i := range d.workers {
		d.workers[i] = newWorker(p, i)
	}
	if o.metrics != nil {
		p.rec = o.metrics.Track(Source{Kind: SourcePool, Name: p.name, Gauges: p.gauges})
		d.stamp = p.rec != nil && d.own.mb == nil
		p.stamp = d.stamp
	}
	for _, w := range d.workers {
		w.start()
	}
	p.unwatch = context.AfterFunc(p.ctx, p.refuseAll)
	return p
}

// maxWorkers is the most workers a pool may have.
const maxWorkers = 1 << 24

// checkWorkers panics, naming fn, unless a pool may have n workers.
func checkWorkers(fn string, n int) {
	if n < 1 || n > maxWorkers {
		panic(fmt.Sprintf("crew: %s: workers must be between 1 and %d, got %d", fn, maxWorkers, n))
	}
}

// unmade panics, naming method: every method of a zero Pool does, for it
// has no worker, and a job it took would never run. The methods test
// p.refused, which every constructor sets, and call unmade only then, so
// that the test stays inline.
func (p *Pool[T]) unmade(method string) {
	panic("crew: " + method + ": the Pool was not made by NewPool, NewGroup or WithContext: use one of them")
}

// Context returns the pool's context: the one its jobs receive (with a
// value added that marks their own Submits: see Submit).
func (p *Pool[T]) Context() context.Context {
	if p.refused == nil {
		p.unmade("Pool.Context")
	}
	return p.ctx
}

// Name reports the pool's name (see WithName).
func (p *Pool[T]) Name() string {
	if p.refused == nil {
		p.unmade("Pool.Name")
	}
	return p.name
}
