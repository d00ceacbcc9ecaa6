package crew

import (
	"context"
	"fmt"
)

// Submitting: Submit and TrySubmit offer a job to the dispatcher, wait
// for room while the pool is full, and run a job's own Submit inline.

// Submit gives job to the pool and returns nil once the pool holds it: it
// does not wait for the job to run, Wait does. The job runs with the pool's
// context, not ctx: ctx only bounds the wait for room. Submit hands the job
// to an idle worker, or queues it in the backlog (see Pool for the order).
//
// Submit blocks only while the pool is full, and blocked Submits take the
// room that opens in the order they came (WithFairShare: share by share,
// in turn). Once Wait (or Shutdown) has
// begun, it returns ErrPoolClosed, whatever ctx's state, also to a Submit
// blocked at that moment (but for a job's own Submit: see below).
// Otherwise it returns ctx.Err() if ctx ends first, or at once if ctx is
// already done; then the pool context's Err() once that context is done
// (after the first error of a WithContext group, say), since the job would
// not run; and ErrNoRoutee if every worker has died
// (a job ends its worker by calling runtime.Goexit). With a backlog of your
// own (WithMailbox), Submit returns what a Fail or DropNewest mailbox
// returns when it refuses the job (ErrMailboxFull, ErrDropped), which
// happens only when no worker is idle, and waits while a Backpressure one
// is full. It does not allocate in steady traffic.
//
// A job may submit more jobs to its own pool by calling Submit with the
// context it received (or one derived from it), while it runs; the context
// WithContext returned is not that one (see WithContext). Such a
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
	if p.refused == nil {
		p.unmade("Pool.Submit")
	}
	if ctx == nil {
		panic("crew: Submit: nil context")
	}
	if p.isNil != nil && p.isNil(job) {
		panic("crew: Submit: nil job")
	}
	if err := ctx.Err(); err != nil {
		return p.doneCtx(ctx, nil, err)
	}
	return p.submit(ctx, task[T]{job: job, f: &p.d.own})
}

// doneCtx is what a Submit of batch b (or of the pool, if b is nil) whose
// ctx is done returns, err being ctx's error: ErrPoolClosed once the
// pool's Wait has begun, ErrBatchClosed once the batch's has, for a Submit
// that is not a job's own; otherwise err.
func (p *Pool[T]) doneCtx(ctx context.Context, b *Batch[T], err error) error {
	if p.own(ctx, b) {
		return err
	}
	p.d.mu.Lock()
	poolShut, batchShut := p.d.drained != nil, b != nil && b.closed()
	p.d.mu.Unlock()
	switch {
	case poolShut:
		return ErrPoolClosed
	case batchShut:
		return ErrBatchClosed
	}
	return err
}

// submit is Submit's and Batch.Submit's: it offers t to the dispatcher, and
// waits for room if the pool is full, unless t comes from a job of its
// flow (then it runs t inline).
func (p *Pool[T]) submit(ctx context.Context, t task[T]) error {
	if p.rec != nil {
		p.submits.Add(1)
		defer p.submitted()
		if p.stamp && t.at == 0 {
			t.at = p.clock()
		}
	}
	var a after[T]
	v, w, err := p.d.offer(t, mayWait, &p.waiters, p.seesStop(), &a)
	a.run(p)
	switch v {
	case accepted:
		p.counted(nil)
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
				return p.counted(raise(err)) // the pool decided first, and not as for a new job: let in, or refused
			}
		}
		return p.submitOwn(ctx, t)
	}
	if v == waiting {
		return p.counted(p.await(ctx, w))
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
		return p.counted(p.refusal(v, err, t.f.batch))
	}
	if p.rec != nil {
		p.rec.Add(EventSubmitted, 1)
		if p.stamp { // a pool with a backlog mailbox observes no wait
			p.rec.Observe(QueueWait, 0, "")
		}
		defer p.measureInline(t.f, p.clock())
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
		return raise(err)
	}
	select {
	case <-done:
		if decided, err := p.withdraw(w); decided {
			return raise(err)
		}
		return ctx.Err()
	case <-w.ready:
		err := w.err
		w.err = nil
		p.waiters.Put(w)
		return raise(err)
	}
}

// A callbackPanic is the panic of a function of the user's that the pool
// calls as it accepts a job, the key function of WithKey or a backlog
// mailbox's, raised while it admitted a blocked Submit: on the goroutine
// of the job whose end made room, where it would crash the process. It
// goes to the blocked Submit instead, which raises it (see raise).
type callbackPanic struct{ v any }

func (c callbackPanic) Error() string { return fmt.Sprint("crew: panic while admitting a job: ", c.v) }

// raise raises a callbackPanic as the panic it was, on the goroutine of
// the Submit it reached; it returns any other err.
func raise(err error) error {
	if c, ok := err.(callbackPanic); ok {
		panic(c.v)
	}
	return err
}

// placeBlocked places the job of a blocked Submit, t, as place does. A
// panic of the key function or of the backlog mailbox, which take nothing
// when they panic, is returned as a callbackPanic. d.mu is held.
func (d *dispatcher[T]) placeBlocked(t task[T], a *after[T]) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = callbackPanic{v}
		}
	}()
	return d.place(t, a)
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
	if p.refused == nil {
		p.unmade("Pool.TrySubmit")
	}
	if p.isNil != nil && p.isNil(job) {
		panic("crew: TrySubmit: nil job")
	}
	return p.trySubmit(task[T]{job: job, f: &p.d.own})
}

func (p *Pool[T]) trySubmit(t task[T]) bool {
	var a after[T]
	if p.rec != nil {
		p.submits.Add(1)
		defer p.submitted()
		if p.stamp {
			t.at = p.clock()
		}
	}
	v, _, _ := p.d.offer(t, noWait, nil, p.seesStop(), &a)
	a.run(p)
	if v != accepted {
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
