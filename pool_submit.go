package crew

import (
	"context"

	"github.com/crewlib/crew/internal/sched"
)

// Submitting beyond the common case: a Submit that waits in line for
// room, a job's own Submit that runs its job inline, and the errors of a
// refusal.

// decide ends a Submit of o's, offered in mode, whose job the scheduler
// did not take at once (v): it waits in line for room, or, for a job's own
// Submit, runs the job inline, or says why the pool refused the job.
func (o *owner[T]) decide(ctx context.Context, job T, at int64, mode sched.Mode, v sched.Verdict, tk sched.Ticket[T, *owner[T]], err error) error {
	p := o.pool
	if mode != sched.FromJob && (v == sched.Waiting || v == sched.Shut || v == sched.BatchShut) && o.owns(ctx) {
		// A job's own Submit, with a context derived from the one the job
		// received (see mode), never waits, and is let in after Wait
		// began: its job is not new. Rare enough to take a Submit in line
		// back out, and offer its job again.
		if v == sched.Waiting {
			if decided, err := p.s.Withdraw(tk); decided && err != ErrPoolClosed && err != ErrBatchClosed {
				return p.counted(err) // the pool decided first, and not as for a new job: let in, or refused
			}
		}
		mode = sched.FromJob
		v, _, err = p.s.Offer(job, o.rec, mode, at, p.seesStop())
	}
	switch {
	case mode == sched.FromJob:
		return o.ownVerdict(ctx, job, v, err)
	case v == sched.Waiting:
		return p.counted(p.s.Await(ctx, tk))
	}
	return o.refusal(v, err)
}

// ownVerdict ends a job's own Submit of o's, which the scheduler gave v:
// on a full pool it runs the job inline, for it never waits.
func (o *owner[T]) ownVerdict(ctx context.Context, job T, v sched.Verdict, err error) error {
	p := o.pool
	if v != sched.Full {
		return p.counted(o.refusal(v, err))
	}
	if p.rec != nil {
		p.rec.Add(EventSubmitted, 1)
		if p.stamp { // a pool with a backlog mailbox observes no wait
			p.rec.Observe(QueueWait, 0, "")
		}
		defer o.measureInline(p.clock())
	}
	o.runInline(ctx, job)
	return nil
}

// refusal is what a Submit of o's gets for a verdict other than Waiting.
func (o *owner[T]) refusal(v sched.Verdict, err error) error {
	switch v {
	case sched.Accepted:
		return nil
	case sched.Shut:
		return ErrPoolClosed
	case sched.Stopped:
		return sched.CtxErr(o.pool.ctx)
	case sched.BatchShut:
		return ErrBatchClosed
	case sched.BatchStopped:
		return sched.CtxErr(o.jobCtx.Context)
	}
	return err
}

// doneCtx is what a Submit of o's whose ctx is done returns, err being
// ctx's error: ErrPoolClosed once the pool's Wait has begun,
// ErrBatchClosed once the batch's has, for a Submit that is not a job's
// own; otherwise err.
func (o *owner[T]) doneCtx(ctx context.Context, err error) error {
	if o.owns(ctx) {
		return err
	}
	switch poolShut, batchShut := o.pool.s.Closed(o.rec); {
	case poolShut:
		return ErrPoolClosed
	case batchShut:
		return ErrBatchClosed
	}
	return err
}

// marked returns the owner whose job handed out ctx (or a context ctx
// derives from), if it is one of p's, and the worker that ran it, if the
// job is one of the pool's own.
func (p *Pool[T]) marked(ctx context.Context) (*owner[T], *worker[T]) {
	c, ok := ctx.(*jobContext[T])
	if !ok {
		c, ok = ctx.Value(workerKey{}).(*jobContext[T])
	}
	if ok && c.owner.pool == p {
		return c.owner, c.w
	}
	return nil, nil
}

// owns reports whether ctx was handed out by a job of o's, or derives from
// a context that was: whether a Submit with it is a job's own.
func (o *owner[T]) owns(ctx context.Context) bool {
	m, _ := o.pool.marked(ctx)
	return m == o
}
