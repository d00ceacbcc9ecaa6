package crew

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
)

// BoundedWaiters reports how many senders are blocked in b's Enqueue, so
// tests can wait for a sender to block instead of sleeping.
func BoundedWaiters[T any](b *Bounded[T]) int {
	b.tailMu.Lock()
	defer b.tailMu.Unlock()
	n := 0
	for w := b.waiting.first; w != nil; w = w.next {
		n++
	}
	return n
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

// PoolBlocked reports how many Submits are blocked on p, waiting for room.
func PoolBlocked[T any](p *Pool[T]) int {
	p.d.mu.Lock()
	defer p.d.mu.Unlock()
	n := 0
	for w := p.d.waiting.first; w != nil; w = w.next {
		n++
	}
	if p.d.fair != nil {
		for s := p.d.fair.blocked.first; s != nil; s = s.next {
			for w := s.waiting.first; w != nil; w = w.next {
				n++
			}
		}
	}
	return n
}

// PoolTenants reports how many tenants' shares p, a pool WithFairShare,
// keeps.
func PoolTenants[T any](p *Pool[T]) int {
	p.d.mu.Lock()
	defer p.d.mu.Unlock()
	return len(p.d.fair.tenants)
}

// FairLeftovers says what p's fair order still holds, once every batch
// of p, a pool WithFairShare, was waited for and p's Wait returned: ""
// if nothing.
func FairLeftovers[T any](p *Pool[T]) string {
	p.d.mu.Lock()
	defer p.d.mu.Unlock()
	fq, own := p.d.fair, p.d.own.share
	var left []string
	if n := len(fq.tenants); n > 0 {
		left = append(left, fmt.Sprintf("%d tenants", n))
	}
	if fq.blocked.first != nil || fq.blocked.last != nil {
		left = append(left, "blocked shares")
	}
	if n := fq.runnable.len(); n > 0 {
		left = append(left, fmt.Sprintf("%d runnable shares", n))
	}
	if own.running != 0 || own.queued != 0 || own.waiting.first != nil {
		left = append(left, fmt.Sprintf("the pool's own share: %d running, %d queued", own.running, own.queued))
	}
	return strings.Join(left, "; ")
}

// ShareVT reports the virtual time of b's share, in a pool WithFairShare.
func ShareVT[T any](b *Batch[T]) float64 {
	d := &b.pool.d
	d.mu.Lock()
	defer d.mu.Unlock()
	return b.flow.share.vt
}

// PoolIdle reports how many of p's workers are idle.
func PoolIdle[T any](p *Pool[T]) int {
	p.d.mu.Lock()
	defer p.d.mu.Unlock()
	return p.d.idle.n
}

// PoolClosed reports whether Wait has begun closing p.
func PoolClosed[T any](p *Pool[T]) bool {
	p.d.mu.Lock()
	defer p.d.mu.Unlock()
	return p.d.drained != nil
}

// WorkerIndex reports which worker of its pool handed a job ctx, or -1.
func WorkerIndex(ctx context.Context) int {
	type indexed interface{ workerIndex() int }
	if w, ok := ctx.Value(workerKey{}).(indexed); ok {
		return w.workerIndex()
	}
	return -1
}

// PoolDeadWorkers reports how many of p's workers a job's runtime.Goexit
// ended.
func PoolDeadWorkers[T any](p *Pool[T]) int {
	p.d.mu.Lock()
	defer p.d.mu.Unlock()
	n := 0
	for _, w := range p.d.workers {
		if w.dead {
			n++
		}
	}
	return n
}

// BatchClosed reports whether b's Wait has begun.
func BatchClosed[T any](b *Batch[T]) bool {
	b.pool.d.mu.Lock()
	defer b.pool.d.mu.Unlock()
	return b.closed()
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
		if seg == nil || !seg.is(s, k>>segmentShift) {
			seg = s.segmentOf(k>>segmentShift, tail)
		}
		seg.buf[k%segmentSlots] = msg
		atomic.StoreUint32(&seg.ready[k%segmentSlots], 1)
	}
}

// OnSegmentedWait sets the function a Segmented's consumer calls as it
// starts to wait for a message whose ticket is taken, and returns a
// function that unsets it.
func OnSegmentedWait(f func()) (undo func()) {
	segmentWaits.Store(&f)
	return func() { segmentWaits.Store(nil) }
}
