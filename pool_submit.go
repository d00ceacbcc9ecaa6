package crew

import (
	"context"

	"github.com/crewlib/crew/internal/sched"
)

// Submitting beyond the common case: a Submit that waits in line for
// room, a job's own Submit that runs its job inline, the errors of a
// refusal, TrySubmit, and the metered Submit of a pool WithMetrics.

// submitMetered is submit for a pool WithMetrics: it stamps the job with
// when it was accepted, and counts it (see closeMetrics).
func (p *Pool[T]) submitMetered(ctx context.Context, job T, b *Batch[T]) error {
	p.submits.Add(1)
	defer p.submitted()
	var at int64
	if p.stamp {
		at = p.clock()
	}
	v, tk, err := p.s.Offer(job, b.entry(), sched.MayWait, at, p.seesStop())
	if v == sched.Accepted {
		return p.counted(nil)
	}
	return p.decide(ctx, job, b, at, v, tk, err)
}

// decide ends a Submit whose job the scheduler did not take at once (v):
// it waits in line for room, or, for a job's own Submit, runs the job
// inline, or says why the pool refused the job.
func (p *Pool[T]) decide(ctx context.Context, job T, b *Batch[T], at int64, v sched.Verdict, tk sched.Ticket[T, *Batch[T]], err error) error {
	switch v {
	case sched.Waiting, sched.Shut, sched.BatchShut:
		if !p.own(ctx, b) {
			break
		}
		// A job's own Submit never waits, and is let in after Wait began:
		// its job is not new. Rare enough to take a Submit in line back out.
		if v == sched.Waiting {
			if decided, err := p.s.Withdraw(tk); decided && err != ErrPoolClosed && err != ErrBatchClosed {
				return p.counted(err) // the pool decided first, and not as for a new job: let in, or refused
			}
		}
		return p.submitOwn(ctx, job, b, at)
	}
	if v == sched.Waiting {
		return p.counted(p.s.Await(ctx, tk))
	}
	return p.refusal(v, err, b)
}

// submitOwn is the Submit of a job that a job of the pool (or of batch b)
// submits with its context, which never waits: on a full pool it runs the
// job inline.
func (p *Pool[T]) submitOwn(ctx context.Context, job T, b *Batch[T], at int64) error {
	v, _, err := p.s.Offer(job, b.entry(), sched.FromJob, at, p.seesStop())
	if v != sched.Full {
		return p.counted(p.refusal(v, err, b))
	}
	if p.rec != nil {
		p.rec.Add(EventSubmitted, 1)
		if p.stamp { // a pool with a backlog mailbox observes no wait
			p.rec.Observe(QueueWait, 0, "")
		}
		defer p.measureInline(b, p.clock())
	}
	if b != nil {
		p.runInline(&b.jobCtx, job, b, nil)
	} else {
		p.runInline(ctx, job, nil, p.caller(ctx))
	}
	return nil
}

// refusal is what Submit returns for a verdict other than Waiting, for a
// job of batch b, or of the pool if b is nil.
func (p *Pool[T]) refusal(v sched.Verdict, err error, b *Batch[T]) error {
	switch v {
	case sched.Accepted:
		return nil
	case sched.Shut:
		return ErrPoolClosed
	case sched.Stopped:
		return sched.CtxErr(p.ctx)
	case sched.BatchShut:
		return ErrBatchClosed
	case sched.BatchStopped:
		return b.ctxErr()
	}
	return err
}

// doneCtx is what a Submit of batch b (or of the pool, if b is nil) whose
// ctx is done returns, err being ctx's error: ErrPoolClosed once the
// pool's Wait has begun, ErrBatchClosed once the batch's has, for a Submit
// that is not a job's own; otherwise err.
func (p *Pool[T]) doneCtx(ctx context.Context, b *Batch[T], err error) error {
	if p.own(ctx, b) {
		return err
	}
	switch poolShut, batchShut := p.s.Closed(b.entry()); {
	case poolShut:
		return ErrPoolClosed
	case batchShut:
		return ErrBatchClosed
	}
	return err
}

func (p *Pool[T]) trySubmit(job T, b *Batch[T]) bool {
	var at int64
	if p.rec != nil {
		p.submits.Add(1)
		defer p.submitted()
		if p.stamp {
			at = p.clock()
		}
	}
	if v, _, _ := p.s.Offer(job, b.entry(), sched.NoWait, at, p.seesStop()); v != sched.Accepted {
		return false
	}
	p.counted(nil)
	return true
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
