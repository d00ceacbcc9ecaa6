package crew

import (
	"context"

	"github.com/crewlib/crew/internal/sched"
)

// Submitting beyond the common case: a Submit that waits in line for
// room, a job's own Submit that runs its job inline, and the errors of a
// refusal.

// decide ends a Submit of o's whose job the scheduler did not take at
// once (v): it waits in line for room, or, for a job's own Submit, runs
// the job inline, or says why the pool refused the job.
func (o *owner[T]) decide(ctx context.Context, job T, at int64, v sched.Verdict, tk sched.Ticket[T, *owner[T]], err error) error {
	p := o.pool
	switch v {
	case sched.Waiting, sched.Shut, sched.BatchShut:
		if !o.owns(ctx) {
			break
		}
		// A job's own Submit never waits, and is let in after Wait began:
		// its job is not new. Rare enough to take a Submit in line back out.
		if v == sched.Waiting {
			if decided, err := p.s.Withdraw(tk); decided && err != ErrPoolClosed && err != ErrBatchClosed {
				return p.counted(err) // the pool decided first, and not as for a new job: let in, or refused
			}
		}
		return o.submitOwn(ctx, job, at)
	}
	if v == sched.Waiting {
		return p.counted(p.s.Await(ctx, tk))
	}
	return o.refusal(v, err)
}

// submitOwn is the Submit of a job that a job of o's submits with its
// context, which never waits: on a full pool it runs the job inline.
func (o *owner[T]) submitOwn(ctx context.Context, job T, at int64) error {
	p := o.pool
	v, _, err := p.s.Offer(job, o.rec, sched.FromJob, at, p.seesStop())
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

// marked returns the owner whose job handed out ctx, if it is one of p's,
// and the worker that ran it, if the job is one of the pool's own.
func (p *Pool[T]) marked(ctx context.Context) (*owner[T], *worker[T]) {
	switch m := ctx.Value(workerKey{}).(type) {
	case *worker[T]:
		if m.pool == p {
			return &p.own, m
		}
	case *owner[T]:
		if m.pool == p {
			return m, nil
		}
	}
	return nil, nil
}

// owns reports whether ctx was handed out by a job of o's: whether a
// Submit with it is a job's own.
func (o *owner[T]) owns(ctx context.Context) bool {
	m, _ := o.pool.marked(ctx)
	return m == o
}
