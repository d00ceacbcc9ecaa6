package crew

import (
	"context"
	"sync/atomic"
)

// BoundedWaiters reports how many senders are blocked in b's Enqueue, so
// tests can wait for a sender to block instead of sleeping.
func BoundedWaiters[T any](b *Bounded[T]) int {
	b.tailMu.Lock()
	defer b.tailMu.Unlock()
	return b.waiting.Len()
}

// PriorityCap reports the capacity of p's heap slice, to check that a
// drained Priority gives its memory back.
func PriorityCap[T any](p *Priority[T]) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return cap(p.q.h)
}

// BoundedWaitersOf reports how many senders are blocked on r's mailbox, a
// Bounded.
func BoundedWaitersOf[T any](r *Ref[T]) int {
	return BoundedWaiters(r.mb.(*Bounded[T]))
}

// PoolBlocked reports how many Submits are blocked on p, waiting for room,
// counted in the scheduler's lines.
func PoolBlocked[T any](p *Pool[T]) int { return p.s.BlockedInLine() }

// PoolTenants reports how many tenants' shares p, a pool WithFairShare,
// keeps for their batches not finished.
func PoolTenants[T any](p *Pool[T]) int {
	active, _ := p.s.Tenants()
	return active
}

// PoolRestingTenants reports how many tenants with no batch p, a pool
// WithFairShare, remembers.
func PoolRestingTenants[T any](p *Pool[T]) int {
	_, resting := p.s.Tenants()
	return resting
}

// FairLeftovers says what p's fair order still holds, once every batch
// of p, a pool WithFairShare, was waited for and p's Wait returned: ""
// if nothing.
func FairLeftovers[T any](p *Pool[T]) string { return p.s.FairLeftovers() }

// ShareVT reports the virtual time of b's share, in a pool WithFairShare.
func ShareVT[T any](b *Batch[T]) float64 { return b.pool.s.VT(b.rec) }

// PoolIdle reports how many of p's workers are idle.
func PoolIdle[T any](p *Pool[T]) int { return p.s.Idle() }

// PoolHeld reports how many jobs p holds: accepted and not ended.
func PoolHeld[T any](p *Pool[T]) int { return p.s.Counts().Held }

// PoolClosed reports whether Wait has begun closing p.
func PoolClosed[T any](p *Pool[T]) bool {
	closed, _ := p.s.Closed(p.own.rec)
	return closed
}

// WorkerIndex reports which worker of its pool handed a job ctx, or -1.
func WorkerIndex(ctx context.Context) int {
	type indexed interface{ workerIndex() int }
	if w, ok := ctx.Value(workerKey{}).(indexed); ok {
		return w.workerIndex()
	}
	return -1
}

// BatchClosed reports whether b's Wait has begun.
func BatchClosed[T any](b *Batch[T]) bool {
	_, closed := b.pool.s.Closed(b.rec)
	return closed
}

// RefLoad reports r's load: its queued messages plus the one in flight,
// what SmallestMailbox scores.
func RefLoad[T any](r *Ref[T]) int64 {
	s := newSlot(r)
	return int64(s.score())
}

// SegmentedClaim takes a ticket in s as an Enqueue does, and returns the
// rest of that Enqueue, the write of its message: tests hold an Enqueue
// between the two.
func SegmentedClaim[T any](s *Segmented[T]) (write func(T)) {
	tail := s.tail.Load()
	k := s.enq.Add(1) - 1
	if k&segClosed != 0 {
		panic("SegmentedClaim: closed")
	}
	return func(msg T) { // the rest of Enqueue
		seg := tail
		i, ok := seg.slot(s, k)
		if !ok {
			seg, i = s.segmentOf(k, tail)
		}
		seg.buf[i] = msg
		atomic.StoreUint32(&seg.ready[i], 1)
	}
}

// OnSegmentedWait sets the function a Segmented's consumer calls as it
// starts to wait for a message whose ticket is taken, and returns a
// function that unsets it.
func OnSegmentedWait(f func()) (undo func()) {
	segmentWaits.Store(&f)
	return func() { segmentWaits.Store(nil) }
}

// RouterKeySlots reports the slots of the buffer that holds the messages
// waiting behind msg's key in keyed router r.
func RouterKeySlots[T any](r *Router[T], msg T) int {
	r.keyed.mu.Lock()
	defer r.keyed.mu.Unlock()
	return r.keyed.keys.Get(msg).waiting.Size()
}

// HoldStreamDeliverers makes s call claiming when one of its jobs found
// its task the head's and is about to try for the deliverer's role,
// and halting when a callback failed and its deliverer is about to halt
// the stream. Call it before s's first Submit.
func HoldStreamDeliverers(s *Stream, claiming, halting func()) {
	s.hooks = &streamHooks{claiming: claiming, halting: halting}
}

// AdaptiveRunning reports the jobs p's controller (WithAdaptiveSize) counts
// in flight: 0 once every job ended.
func AdaptiveRunning[T any](p *Pool[T]) int64 { return p.adapt.running.Load() }
