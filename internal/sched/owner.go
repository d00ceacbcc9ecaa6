package sched

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/crewlib/crew/internal/queue"
)

// An Owner is the scheduler's record of whose jobs these are: the pool's
// own (see Own), or one of its batches (see OpenBatch). Every job is
// offered with its Owner, and every Grant carries the owner the pool
// gave it (Grant.Owner), so the pool's own jobs and a batch's take one
// road. Its fields are the scheduler's, under its lock. The pool's own
// jobs end with the pool (Shut, Stop); a batch's also with the batch
// (WaitBatch, StopBatch).
type Owner[T, B any] struct {
	flow    flow[T, B]               // the owner's jobs not ended: queued, running, and its limit
	ctx     context.Context          // a batch's context: once a dispatch sees it done, the batch's jobs not dispatched are skipped
	stop    error                    // the cause of ctx's end, once a dispatch saw it (or StopBatch gave it)
	ran     int64                    // fair shares: the run time (ns) of its jobs that ended
	done    Ended                    // the jobs that ended (a batch's; the pool's own count in the scheduler's)
	inline  atomic.Int64             // the batch's jobs that ran inline (see RanInline), counted without the lock
	closing bool                     // WaitBatch began
	pending bool                     // drained counts one: WaitBatch began while a job of the batch was held, and one still is
	drained sync.WaitGroup           // what WaitBatch waits on (see release)
	links   queue.Links[Owner[T, B]] // in the scheduler's batches until WaitBatch forgets it
}

// Own returns the record of the pool's own jobs, whose owner is
// Config.Own.
func (s *Scheduler[T, B]) Own() *Owner[T, B] { return &s.own }

// Halt records cause as the end of o's context, unless a dispatch saw it
// end first: the pool's (see Stop) for its own jobs, else the batch's
// (see StopBatch). It takes the Submits it refuses out of line, for the
// caller to refuse once it canceled the context.
func (s *Scheduler[T, B]) Halt(o *Owner[T, B], cause error) Refusals[T, B] {
	if o == &s.own {
		return s.Stop(cause)
	}
	return s.StopBatch(o, cause)
}

// OpenBatch sets b up as a batch of the pool, owned by owner (what
// Grant.Owner returns for its jobs), with the batch's context ctx and at
// most limit of its jobs running at once (0: no limit). With fair shares,
// b joins the share of tenant, which takes weight, or a share of its own
// if tenant is "".
func (s *Scheduler[T, B]) OpenBatch(b *Owner[T, B], owner B, ctx context.Context, limit int, tenant string, weight int) {
	b.flow = flow[T, B]{q: queue.RingOf(s.bufs), limit: limit, batch: b, owner: owner, fifo: s.fair == nil && limit == 0}
	b.ctx = ctx
	b.links.Init(b)
	var sh *share[T, B]
	if s.fair != nil {
		sh = newShare[T, B](max(weight, 1)) // made before the lock; unused if the tenant has a share
	}
	s.mu.Lock()
	s.batches.PushBack(&b.links)
	if sh != nil {
		s.fair.join(&b.flow, sh, tenant)
	}
	s.mu.Unlock()
}

// WaitBatch closes b to new jobs but its own jobs' (Offer then returns
// BatchShut), refuses its blocked Submits with err, waits until no job of b
// is held, forgets b, and reports how its jobs ended. The batch stays
// known until then, its jobs running, so that Shutdown cancels them (see
// OpenBatches). Later calls return at once, with the same counts.
func (s *Scheduler[T, B]) WaitBatch(b *Owner[T, B], err error) Ended {
	s.mu.Lock()
	var refused Refusals[T, B]
	if !b.closing {
		b.closing = true
		if b.held() > 0 {
			b.pending = true
			b.drained.Add(1)
		}
		refused = s.extract(b)
	}
	if b.held() == 0 {
		// Nothing left to wait for: forget b in this turn of the lock.
		ended := s.finish(b)
		s.mu.Unlock()
		refused.Refuse(err)
		return ended
	}
	s.mu.Unlock()
	refused.Refuse(err)
	b.drained.Wait()
	// The job whose end let Wait return forgot b (see release): its
	// counts change no more.
	return b.done
}

// finish forgets b, once no job of it is held, and reports how its jobs
// ended. Its queue's buffer goes back to be recycled, for the next
// batch's: no job joins b's queue any more. s.mu is held.
func (s *Scheduler[T, B]) finish(b *Owner[T, B]) Ended {
	if b.links.In(&s.batches) {
		s.batches.Remove(&b.links)
		b.flow.q.Release()
		if s.fair != nil {
			s.fair.leave(&b.flow)
		}
	}
	return b.done
}

// StopBatch records cause as the end of b's context, unless a dispatch saw
// it end first: from now on b's jobs not dispatched are skipped, with that
// cause. It takes b's blocked Submits out of line, for the caller to
// refuse once it canceled the context.
func (s *Scheduler[T, B]) StopBatch(b *Owner[T, B], cause error) Refusals[T, B] {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.stop == nil {
		b.stop = cause
	}
	return s.extract(b)
}

// Closed reports whether the pool's Shut began, and whether o's
// WaitBatch began (never, for the pool's own jobs).
func (s *Scheduler[T, B]) Closed(o *Owner[T, B]) (pool, batch bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.drained != nil, o.closed()
}

// OpenBatches returns the owners of the batches not finished yet.
func (s *Scheduler[T, B]) OpenBatches() []B {
	for {
		s.mu.Lock()
		n := s.batches.Len()
		s.mu.Unlock()
		list := make([]B, 0, n) // made before the lock is taken
		s.mu.Lock()
		if s.batches.Len() <= n {
			s.batches.Each(func(b *Owner[T, B]) { list = append(list, b.flow.owner) })
			s.mu.Unlock()
			return list
		}
		s.mu.Unlock() // more batches came: make room for them
	}
}

// closed reports whether the batch's WaitBatch began. s.mu is held.
func (b *Owner[T, B]) closed() bool { return b.closing }

// held reports the batch's jobs accepted and not ended. s.mu is held.
func (b *Owner[T, B]) held() int { return b.flow.waiting + b.flow.running }

// seesDone reports whether the batch's context is done, as a dispatch of
// one of its jobs sees it: once one has seen it (stop), every later one
// skips. s.mu is held.
func (b *Owner[T, B]) seesDone() bool {
	if b.stop == nil && b.ctx.Err() != nil {
		b.stop = context.Cause(b.ctx)
	}
	return b.stop != nil
}

// ctxErr is what a Submit of the batch gets once its context is done.
func (b *Owner[T, B]) ctxErr() error { return CtxErr(b.ctx) }

// release forgets b and lets WaitBatch return, once it began and no job
// of the batch is held: WaitBatch need not take the lock again. s.mu is
// held.
func (s *Scheduler[T, B]) release(b *Owner[T, B]) {
	if b.pending && b.held() == 0 {
		b.pending = false
		s.finish(b)
		b.drained.Done()
	}
}

// CtxErr returns ctx.Err(), or context.Canceled while ctx is being
// canceled: a pool's or batch's cancellation runs after the lock that
// stopped dispatching is released.
func CtxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return context.Canceled
}
