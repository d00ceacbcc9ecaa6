package crew

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/crewlib/crew/internal/sched"
)

// An owner is whose jobs these are: the pool's own (Pool.own) or one
// batch's (a Batch is one). A job's whole road goes through its owner, the
// same for both: Submit and TrySubmit, the job's context, its failure,
// the first error's cancellation, its dead letter and Wait's outcome. What
// differs between the two kinds is in the owner's fields, set as it is
// made, never in a test of which kind it is; the scheduler keeps a record
// of each (rec), which every grant carries back (sched.Grant.Owner).
type owner[T any] struct {
	pool          *Pool[T]
	rec           *sched.Owner[T, *owner[T]] // the scheduler's record: the pool's own (Scheduler.Own), or the batch's (Batch.slot)
	cancel        context.CancelCauseFunc    // cancels the context its jobs derive from
	sink          func(DeadLetter)           // the sink of its skipped jobs, or nil: not sent (a batch's is the pool's, unless it has its own)
	tenant        string                     // WithTenant: the label of its jobs' run times, "" for none
	cancelOnError bool                       // its first error cancels ctx: a batch's always, the pool's WithCancelOnError
	perWorker     bool                       // its jobs receive their worker's context (see contextOn)
	allErrors     bool                       // WithAllErrors: Wait returns every error, joined

	jobCtx jobContext[T] // the context its jobs derive from, the pool's or the batch's, marked as the owner's (see contextOn)
	errs   errorSet      // the jobs' errors
}

// contextOn returns the context a job of o's receives on worker w. The
// pool's own jobs (perWorker) receive their worker's: the pool's context,
// marked as the worker's, so that Stats can count the jobs they run inline
// as the worker's (and tests can tell which worker ran a job). A batch's
// jobs share the batch's context, marked as the batch's.
func (o *owner[T]) contextOn(w *worker[T]) context.Context {
	if o.perWorker {
		return &w.ctx
	}
	return &o.jobCtx
}

// init sets o up as an owner of pool p's jobs, with its context ctx
// (canceled by cancel) and its record in the scheduler.
func (o *owner[T]) init(p *Pool[T], rec *sched.Owner[T, *owner[T]], ctx context.Context, cancel context.CancelCauseFunc) {
	o.pool, o.rec, o.cancel = p, rec, cancel
	o.jobCtx = jobContext[T]{Context: ctx, owner: o}
}

// submit is Submit, Pool's or Batch's (fn, which its panics name), for a
// job of o's. It offers the job to the scheduler, which takes it at once
// in the common case. Metrics are a hook on it: a pool that stamps its
// jobs (see Pool.stamp) reads the clock as the job is offered, and
// counted counts the job once accepted.
func (o *owner[T]) submit(fn string, ctx context.Context, job T) error {
	p := o.pool
	if ctx == nil {
		panic("crew: " + fn + ": nil context")
	}
	if p.isNil != nil && p.isNil(job) {
		panic("crew: " + fn + ": nil job")
	}
	if err := ctx.Err(); err != nil {
		return o.doneCtx(ctx, err)
	}
	var at int64
	if p.stamp {
		at = p.clock()
	}
	mode := o.mode(ctx)
	v, tk, err := p.s.Offer(job, o.rec, mode, at, p.seesStop())
	if v == sched.Accepted {
		return p.counted(nil)
	}
	return o.decide(ctx, job, at, mode, v, tk, err)
}

// mode is how a Submit of o's with ctx offers its job: as a job's own
// (sched.FromJob) if ctx is the context a job of o's received, else as
// one that may wait. It costs a type assertion, not a walk of ctx's
// values: a job's own Submit with a context derived from the one it
// received is told apart only if the pool is full (see decide).
func (o *owner[T]) mode(ctx context.Context) sched.Mode {
	if c, ok := ctx.(*jobContext[T]); ok && c.owner == o {
		return sched.FromJob
	}
	return sched.MayWait
}

// nilJob reports whether a group's job is nil: Submit refuses it.
func nilJob(j Job) bool { return j == nil }

// seesStop returns the cause of the pool context's end if the context can
// end by its parent and has, else nil: a Submit or worker reads it before
// it calls the scheduler (a read under its lock would cost the holder a
// cache line it should not wait for), and the scheduler records it (see
// sched.Scheduler.Stop). The pool's own cancellations record theirs as
// they cancel.
func (p *Pool[T]) seesStop() error {
	if p.watch && p.ctx.Err() != nil {
		return context.Cause(p.ctx)
	}
	return nil
}

// trySubmit is TrySubmit, Pool's or Batch's (fn, which its panic names),
// for a job of o's.
func (o *owner[T]) trySubmit(fn string, job T) bool {
	p := o.pool
	if p.isNil != nil && p.isNil(job) {
		panic("crew: " + fn + ": nil job")
	}
	var at int64
	if p.stamp {
		at = p.clock()
	}
	if v, _, _ := p.s.Offer(job, o.rec, sched.NoWait, at, p.seesStop()); v != sched.Accepted {
		return false
	}
	p.counted(nil)
	return true
}

// fail records err, the failure of a job of o's that no worker's Next
// counts out (one run inline, say), for Wait, counts it (in o's and the
// pool's totals), then reports it: so it is kept and counted even if the
// Recorder or the error handler calls runtime.Goexit.
func (o *owner[T]) fail(err error) {
	f := failureOf(err)
	o.record(err)
	o.pool.s.Tally(o.rec, f)
	o.pool.report(err, f)
}

// record keeps err, a job's failure, for Wait and, if it is the first and
// o cancels on error, cancels o's context with it (see stop).
func (o *owner[T]) record(err error) {
	if o.errs.add(err, o.jobCtx.Context, o.allErrors) && o.cancelOnError {
		o.stop(err)
	}
}

// stop stops dispatching o's jobs, then cancels o's context with cause:
// no dispatch runs a job of o's after a job could see the context end.
// The Submits o refuses meanwhile (the pool's, for the pool's own jobs)
// get the context's error.
func (o *owner[T]) stop(cause error) {
	blocked := o.pool.s.Halt(o.rec, cause)
	o.cancel(cause)
	blocked.Refuse(sched.CtxErr(o.jobCtx.Context))
}

// outcome is what o's Wait returns once no job of o's is held, given
// whether one was skipped: the first error (every one, WithAllErrors),
// else, if a job was skipped, the cause of the context that skipped it,
// so that Wait never reports success for jobs that did not run.
func (o *owner[T]) outcome(skipped bool) error {
	if err := o.errs.result(o.allErrors); err != nil {
		return err
	}
	if skipped {
		if err := context.Cause(o.jobCtx.Context); err != nil {
			return err
		}
		return context.Cause(o.pool.ctx)
	}
	return nil
}

// failureOf tells the scheduler how a job that returned err failed.
func failureOf(err error) sched.Failure {
	if isPanic(err) {
		return sched.Panicked
	}
	return sched.Failed
}

// A jobContext is an owner's context as its jobs receive it, marked as
// the owner's (and, for the pool's own jobs, their worker's), as
// context.WithValue(ctx, workerKey{}, c) would make it, without an
// allocation of its own: it lives in the owner (or the worker). A Submit
// with it is a job's own (see owner.mode); one with a context derived from
// it finds it by its Value (see Pool.marked).
type jobContext[T any] struct {
	context.Context
	owner *owner[T]
	w     *worker[T] // the worker the pool's own jobs run on (see owner.contextOn), else nil
}

func (c *jobContext[T]) Value(key any) any {
	if key == (workerKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// workerIndex reports the index of the worker that handed out c, or -1
// for a batch's jobs' context (for tests).
func (c *jobContext[T]) workerIndex() int {
	if c.w == nil {
		return -1
	}
	return c.w.rec.Index()
}

// An errorSet keeps the errors of an owner's jobs for its Wait: the first,
// and with WithAllErrors every one but those that only echo the end of the
// context the jobs received, as the jobs still running when the first
// error canceled it tend to return. It is made with the first error, so
// that an owner whose jobs all succeed (a batch per request, say) carries a
// pointer, not a lock and a list.
type errorSet struct {
	set atomic.Pointer[errorList]
}

// An errorList is what an errorSet holds once an error was added.
type errorList struct {
	mu   sync.Mutex // guards the fields below
	err  error      // the first error
	errs []error    // every error, with all
}

// add keeps err, with every other error if all, and reports whether it is
// the first; ctx is the jobs'.
func (e *errorSet) add(err error, ctx context.Context, all bool) (first bool) {
	l := e.set.Load()
	if l == nil {
		l = new(errorList)
		if !e.set.CompareAndSwap(nil, l) {
			l = e.set.Load()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	first = l.err == nil
	if first {
		l.err = err
	}
	if all && (first || !echoes(err, ctx)) {
		l.errs = append(l.errs, err)
	}
	return first
}

// result returns every error joined, with all, else the first, or nil.
// An add that happened before the call is seen.
func (e *errorSet) result(all bool) error {
	l := e.set.Load()
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if all && len(l.errs) > 0 {
		return errors.Join(l.errs...)
	}
	return l.err
}

// echoes reports whether err only echoes the end of ctx: ctx is done, and
// err is, or wraps, context.Canceled or context.DeadlineExceeded. The one
// test of it, for an owner's errors, Map's and the ordered streams'.
func echoes(err error, ctx context.Context) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}
