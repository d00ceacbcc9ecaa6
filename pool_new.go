package crew

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/crewlib/crew/internal/sched"
)

// A Job is the unit of work of a group (NewGroup, WithContext): a function
// that receives the pool's context and reports failure as an error.
type Job = func(context.Context) error

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
// queue waits and run times as they happen), WithAdaptiveSize (a size
// found between two bounds from the jobs' run times; workers is where it
// starts) and WithoutPanicRecovery.
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
	checkAdaptive("NewPool", workers, &o)
	return newPool(workers, handle, &o)
}

// NewGroup starts a pool of workers goroutines whose jobs are functions, as
// errgroup's are. See NewPool for the options, and the workers it takes.
// Submit panics on a nil job.
func NewGroup(workers int, opts ...Option) *Pool[Job] {
	checkWorkers("NewGroup", workers)
	o := collect(opts)
	o.only("NewGroup", poolOpts)
	checkAdaptive("NewGroup", workers, &o)
	return newGroup(workers, &o)
}

func newGroup(workers int, o *options) *Pool[Job] {
	p := newPool(workers, runJob, o)
	p.isNil = nilJob
	return p
}

// WithContext starts a group, as NewGroup does, whose context derives from
// ctx and is canceled, with the first error as its cause, by the first job
// that fails, or when Wait returns, whichever comes first. It returns the
// group and that context. It is errgroup's WithContext with a limit of
// workers goroutines.
//
// Jobs receive a context derived from the returned one, with the same
// Done, Err, Cause and values, and a value added that marks their own
// Submits: only a Submit with the context a job received (or one derived
// from it) is the job's own (see Submit). A job's Submit with the returned
// context, captured from outside, is not: it blocks on a full pool, and is
// refused with ErrPoolClosed once Wait has begun, as any other Submit is.
// Counting it as the job's own would let a producer's loop that submits
// with that context pass the pool's bound.
//
// It panics if ctx is nil, workers is not between 1 and 1<<24, or
// WithParent is given.
func WithContext(ctx context.Context, workers int, opts ...Option) (*Pool[Job], context.Context) {
	if ctx == nil {
		panic("crew: WithContext: nil context")
	}
	checkWorkers("WithContext", workers)
	o := collect(opts)
	o.only("WithContext", poolOpts&^optParent)
	checkAdaptive("WithContext", workers, &o)
	o.parent, o.cancelOnError = ctx, true
	p := newGroup(workers, &o)
	return p, p.ctx
}

var poolSeq atomic.Int64

// newPool checks the options that depend on T, then starts the pool.
func newPool[T any](n int, handle func(context.Context, T) error, o *options) *Pool[T] {
	p := &Pool[T]{
		handle:     handle,
		name:       o.name,
		onError:    o.onError,
		noRecovery: o.noRecovery,
		refused:    make(chan struct{}),
	}
	if o.fairShare && (o.keyed != nil || o.newMailbox != nil) {
		panic("crew: WithFairShare shares the workers between batches, and a pool with WithKey, WithConsistentHash or WithMailbox takes none")
	}
	if o.set&optFairWindow != 0 && !o.fairShare {
		panic("crew: WithFairWindow sets how a pool WithFairShare credits quiet shares: give it WithFairShare too")
	}
	c := sched.Config[T, *owner[T]]{Workers: n, Fair: o.fairShare, OnLost: p.evicted, Own: &p.own}
	if o.fairShare {
		c.FairWindow = int64(DefaultFairWindow)
		if o.set&optFairWindow != 0 {
			c.FairWindow = int64(o.fairWindow)
		}
	}
	if o.keyed != nil {
		c.Keys, c.Pin = keyedFor[T](o, "pool", "jobs")
	}
	if o.newMailbox != nil {
		f, ok := o.newMailbox.(func() Mailbox[T])
		if !ok {
			panic(fmt.Sprintf("crew: WithMailbox: a %T does not make mailboxes for %T jobs", o.newMailbox, *new(T)))
		}
		c.Backlog = made(f())
	}
	if p.name == "" {
		p.name = "pool-" + strconv.FormatInt(poolSeq.Add(1), 10)
	}
	p.epoch = time.Now()
	parent := o.parent
	if parent == nil {
		parent = context.Background()
	}
	p.watch = parent.Done() != nil
	p.ctx, p.cancel = context.WithCancelCause(parent)
	p.own.init(p, p.s.Own(), p.ctx, p.cancel)
	p.own.sink, p.own.cancelOnError, p.own.perWorker = o.deadLetters, o.cancelOnError, true
	p.own.allErrors = o.allErrors
	switch s := o.strategy.(type) {
	case nil, *smallest, *roundRobin:
		// They hand jobs to the idle workers in turn: the scheduler's
		// rotation, with no call per job.
	default:
		c.FirstIdle = s.firstIdle
	}
	switch {
	case o.set&optQueueSize != 0:
		c.PerWorker = 1 + min(o.queueSize, math.MaxInt-1) // whole: the scheduler's bound saturates
	case c.Backlog == nil && c.Keys == nil && c.Pin == nil:
		c.PerWorker = 1 + DefaultQueueSize
	}
	if o.metrics != nil {
		// Its gauges may be read at once, and take the scheduler's lock,
		// which Init holds as it makes the scheduler.
		p.rec = o.metrics.Track(Source{Kind: SourcePool, Name: p.name, Gauges: p.gauges})
		p.stamp = p.rec != nil && c.Backlog == nil
		c.Stamp = p.stamp
	}
	if o.set&optAdaptive != 0 {
		p.adapt = newSizer(o.adaptMin, o.adaptMax, n, p.resizeBy, p.waiting)
	}
	p.clocked = p.rec != nil || p.adapt != nil
	c.Name = p.name
	p.s.Init(c)
	for _, r := range p.s.Workers() {
		newWorker(p, r).start()
	}
	p.unwatch = context.AfterFunc(p.ctx, p.refuseAll)
	return p
}

// maxWorkers is the most workers a pool may have, and the most routees
// SpawnRouter spawns: a goroutine each, all started at once.
const maxWorkers = 1 << 24

// checkWorkers panics, naming fn, unless a pool may have n workers.
func checkWorkers(fn string, n int) { checkSize(fn, "workers", n, maxWorkers) }

// checkSize panics, naming fn, its argument arg and the limit, unless n is
// between 1 and most: for a size crew allocates or spawns whole, at once,
// where make would panic with a runtime error, or run out of memory.
func checkSize(fn, arg string, n, most int) {
	if n < 1 || n > most {
		panic(fmt.Sprintf("crew: %s: %s must be between 1 and %d, got %d", fn, arg, most, n))
	}
}
