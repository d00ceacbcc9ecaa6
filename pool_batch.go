package crew

import (
	"context"
	"strconv"
	"time"

	"github.com/crewlib/crew/internal/sched"
)

// A Batch is a group of jobs on a long-lived Pool, with its own Wait, first
// error and context, as an errgroup has: many batches share the pool's
// workers, and so its limit on concurrent work, while each waits for its
// own jobs only. Make one with Pool.NewBatch, one per request say.
//
// A batch's jobs are jobs of the pool: they count against the pool's bound,
// are dispatched in submission order with every other job of the pool (see
// Pool), and run with the batch's context (the one NewBatch returns; for a
// typed pool, the handler's ctx is the batch's). So batches share the
// workers first come, first served: a batch that queues 1,000 slow jobs
// first holds every worker until they have started, unless the pool was
// made WithFairShare, which shares them by run time (see WithFairShare). WithLimit caps a
// batch's share: at most n of its jobs run at once; its jobs over the limit
// wait in the backlog without holding a worker, the other batches' jobs
// overtake them, and among the jobs that may run, dispatch stays in
// submission order.
//
// The first error of a batch's jobs (a returned error, a panic as an error
// that errors.As unwraps to *panics.ErrRecovered, or a runtime.Goexit)
// cancels the batch's context, with that error as its cause; the batch's
// jobs not yet dispatched are then skipped (counted in Stats, and sent to
// the dead-letter sink, if there is one), and its blocked Submits return. It never cancels the pool, nor another batch, nor
// reaches the pool's Wait.
//
// A Batch is safe for concurrent use; the zero Batch is not usable (every
// method panics, as a nil *Batch's do). Submit synchronizes before its job
// runs; the end of each of the batch's jobs synchronizes before the return
// of the batch's Wait. Every batch must reach Wait, which releases its
// context.
type Batch[T any] struct {
	owner[T]                           // whose jobs the batch's are: its context, sink, errors
	slot     sched.Owner[T, *owner[T]] // the scheduler's record of the batch (owner.rec), with its limit, guarded by its lock
}

// unmade panics, naming the batch's method: every method of a zero Batch
// does, for it belongs to no pool, and so does every method of a nil
// *Batch.
func (b *Batch[T]) unmade(method string) {
	if b == nil {
		panic("crew: Batch." + method + ": nil Batch: make one with Pool.NewBatch")
	}
	panic("crew: Batch." + method + ": the Batch was not made by Pool.NewBatch: use it")
}

// NewBatch starts a batch of jobs on p, and returns it with its context,
// which derives from ctx and is canceled by the batch's first error (with
// that error as its cause) or when its Wait returns, whichever comes first.
// The batch's jobs receive that context, with a value added that marks
// their own Submits (see Submit): its Done, Err and Cause are the batch's.
//
// Options: WithLimit (at most n of the batch's jobs run at once),
// WithAllErrors (Wait returns every error, joined), WithDeadLetters (the
// sink of the batch's skipped jobs; by default the pool's), WithTenant and
// WithWeight (on a pool WithFairShare, the batch's share of the workers;
// on another, which stays first come, first served, the tenant labels
// the run times of the batch's jobs in the pool's metrics, and the weight
// does nothing). NewBatch panics if ctx is nil, an option does not apply
// to a batch, or p has a backlog of its own or keys (WithMailbox, WithKey,
// WithConsistentHash), which batches do not support. After p's Wait (or
// Shutdown) began, the batch's Submit returns ErrPoolClosed.
func (p *Pool[T]) NewBatch(ctx context.Context, opts ...Option) (*Batch[T], context.Context) {
	return p.newBatch("NewBatch", ctx, opts)
}

// newBatch is NewBatch, for fn (NewBatch, MapBatch), which its panics
// name.
func (p *Pool[T]) newBatch(fn string, ctx context.Context, opts []Option) (*Batch[T], context.Context) {
	p.takesBatches(fn)
	if ctx == nil {
		panic("crew: " + fn + ": nil context")
	}
	var o options
	if len(opts) > 0 {
		o = collect(opts)
		o.only(fn, batchOpts)
	}
	return p.openBatch(ctx, &o)
}

// takesBatches panics, naming fn, unless p takes batches.
func (p *Pool[T]) takesBatches(fn string) {
	if p == nil || p.refused == nil {
		p.unmade(fn)
	}
	if !p.s.Plain() {
		panic("crew: " + fn + ": batches need the pool's default backlog: a pool with WithMailbox, WithKey or WithConsistentHash takes none")
	}
}

// openBatch is newBatch once p, ctx and the options are checked.
func (p *Pool[T]) openBatch(ctx context.Context, o *options) (*Batch[T], context.Context) {
	b := new(Batch[T])
	bctx, cancel := context.WithCancelCause(ctx)
	b.init(p, &b.slot, bctx, cancel)
	b.sink, b.tenant, b.cancelOnError = p.own.sink, o.tenant, true
	if o.deadLetters != nil {
		b.sink = o.deadLetters
	}
	b.allErrors = o.allErrors
	p.s.OpenBatch(b.rec, &b.owner, bctx, o.limit, o.tenant, o.weight)
	return b, bctx
}

// Submit gives job to the batch's pool, as Pool.Submit does, and returns nil
// once the pool holds it: it does not wait for the job to run, the batch's
// Wait does. The job runs with the batch's context; ctx only bounds the wait
// for room in the pool.
//
// Submit blocks only while the pool is full, taking its turn among the
// pool's blocked Submits. Once the pool's Wait or Shutdown has begun, it
// returns ErrPoolClosed, and once the batch's Wait has begun,
// ErrBatchClosed, whatever ctx's state (but for a job's own Submit: see
// below). Otherwise it returns ctx.Err() if ctx ends first, or at once if
// ctx is already done; then the batch context's Err() once that context is
// done (after the batch's first error, say). A job of the
// batch may submit more jobs to it, with the context it received, as a
// pool's job may (see Pool.Submit): such a Submit never blocks, running the
// new job inline when the pool is full (or, with WithLimit, queueing it
// beyond the pool's bound behind the batch's limit), and is accepted after
// the batch's Wait began. Submit panics if ctx is nil.
func (b *Batch[T]) Submit(ctx context.Context, job T) error {
	if b == nil || b.pool == nil {
		b.unmade("Submit")
	}
	// The common case written out, as Pool.Submit writes out the pool's
	// own: a call less per job, 2-3 ns of a no-op job's 58-63
	// (BenchmarkBatchSubmit/batch); everything else is owner.submit's.
	// Change both copies together.
	o, p := &b.owner, b.pool
	if ctx == nil || p.rec != nil || p.isNil != nil && p.isNil(job) || ctx.Err() != nil {
		return o.submit("Batch.Submit", ctx, job)
	}
	mode := o.mode(ctx)
	v, tk, err := p.s.Offer(job, o.rec, mode, 0, p.seesStop())
	if v == sched.Accepted {
		return nil
	}
	return o.decide(ctx, job, 0, mode, v, tk, err)
}

// TrySubmit gives job to the batch's pool if it has room right now, without
// blocking, and reports whether it did. It returns false when the pool is
// full, the batch's Wait has begun, its context is done, or the pool is
// closed.
func (b *Batch[T]) TrySubmit(job T) bool {
	if b == nil || b.pool == nil {
		b.unmade("TrySubmit")
	}
	return b.trySubmit("Batch.TrySubmit", job)
}

// Wait closes the batch to new jobs (a job's own Submit aside), waits until
// every job the batch accepted has ended (run, or been skipped once the
// batch's context was done), cancels the batch's context and returns the
// batch's first error, or every error joined with WithAllErrors. If jobs were
// skipped and none failed, it returns the cause of the batch's context, so
// that a batch never reports success for jobs that did not run. It waits for
// the batch's jobs only, never for another batch's. Wait may be called more
// than once, from any goroutine but the batch's own jobs (which would wait
// for themselves); every call returns the same. A job that waits for a
// batch of its own pool holds a worker while it waits: if every worker
// does, the batches' jobs never run.
func (b *Batch[T]) Wait() error {
	if b == nil || b.pool == nil {
		b.unmade("Wait")
	}
	err := b.outcome(b.pool.s.WaitBatch(b.rec, ErrBatchClosed).Canceled > 0)
	b.cancel(nil)
	return err
}

// WithLimit makes a batch (Pool.NewBatch) run at most n of its jobs at once.
// Its jobs over the limit wait in the pool's backlog, counted against the
// pool's bound, without holding a worker: other jobs overtake them, and
// each is dispatched, in its submission order, when one of the batch's jobs
// ends. A job's own Submit on a full pool queues its job there too, beyond
// the pool's bound, rather than run it inline beside its parent. So a job
// that waits for another job of its batch needs room under the limit: with
// WithLimit(1) it would wait forever. It panics if n is less than 1.
func WithLimit(n int) Option {
	if n < 1 {
		panic("crew: WithLimit: n must be at least 1, got " + strconv.Itoa(n))
	}
	return func(o *options) { o.set |= optLimit; o.limit = n }
}

// BatchStats is a snapshot of a batch's counters, from Batch.Stats; after
// the batch's Wait they are exact.
type BatchStats struct {
	Submitted int64 // jobs accepted: Completed + Canceled + Queued + Running
	Queued    int   // jobs accepted and not dispatched yet: in the pool's backlog, or over the batch's limit
	Running   int   // jobs dispatched (taken by a worker, or granted to one) and not ended
	Completed int64 // jobs that ran, failed or not (Inline ones too)
	Failed    int64 // jobs that returned an error, panicked or called runtime.Goexit (with the job that ran it inline, if one did: both fail)
	Panicked  int64 // jobs that panicked
	Canceled  int64 // jobs skipped because the batch's (or the pool's) context was done when they would have been dispatched
	Inline    int64 // jobs submitted by a job of the batch while the pool was full, so run inline
	Limit     int   // the batch's WithLimit, or 0

	// RunTime is the time its jobs that ended ran (Inline ones aside), in
	// a pool WithFairShare, which measures it to share the workers (the
	// quick jobs' from one in 16: see WithFairShare); 0 in other pools.
	// The RunTime of a tenant's batches, summed, is the tenant's service.
	RunTime time.Duration
}

// Stats returns a snapshot of the batch's counters. It takes the pool's
// scheduler's lock once, for O(1).
func (b *Batch[T]) Stats() BatchStats {
	if b == nil || b.pool == nil {
		b.unmade("Stats")
	}
	c := b.pool.s.BatchCounts(b.rec)
	s := BatchStats{
		Queued: c.Queued, Running: c.Running,
		Completed: c.Completed + c.Inline, Failed: c.Failed, Panicked: c.Panicked,
		Canceled: c.Canceled, Inline: c.Inline, Limit: c.Limit,
		RunTime: time.Duration(c.RunTime),
	}
	s.Submitted = s.Completed + s.Canceled + int64(s.Queued+s.Running)
	return s
}
