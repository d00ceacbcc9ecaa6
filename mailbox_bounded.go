package crew

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
)

// A Bounded is a FIFO mailbox on a fixed ring of capacity slots, allocated
// once by NewBounded. When it is full, its Overflow policy decides:
//
//   - Fail: Enqueue returns ErrMailboxFull; nothing is stored.
//   - DropNewest: Enqueue returns ErrDropped (wrapping ErrMailboxFull); the
//     new message is discarded, the caller still has it.
//   - DropOldest: the oldest message is evicted and handed to the hook
//     installed with OnDrop (reason ErrEvicted); the new one is accepted and
//     Enqueue returns nil.
//   - Backpressure: Enqueue blocks until room opens, ctx is done (it returns
//     ctx.Err()) or Close (ErrMailboxClosed). Blocked senders are served
//     strictly in arrival order: a Dequeue moves the oldest waiter's message
//     into the slot it freed, so a newcomer cannot overtake a waiter.
//
// Enqueue and Dequeue are O(1): one uncontended mutex and one atomic add each,
// with no allocation, also when a sender blocks (waiters are recycled).
//
// A Bounded is safe for concurrent use. The zero value is not usable: create
// one with NewBounded.
type Bounded[T any] struct {
	n        atomic.Int64                   // queued messages; written under mu, read by Len
	dropped  atomic.Int64                   // messages discarded by DropNewest or DropOldest
	hook     atomic.Pointer[func(T, error)] // set by OnDrop
	overflow Overflow
	capacity int
	waiters  *freeList[waiter[T]] // shared by all Bounded[T]; set by NewBounded

	mu          sync.Mutex // guards q, closed and the waiter list
	q           ring[T]    // fixed: len(q.buf) == capacity until Close frees it
	first, last *waiter[T] // blocked Backpressure senders, oldest first
	closed      bool
}

// A waiter is one Backpressure sender blocked in Enqueue.
type waiter[T any] struct {
	msg        T
	ready      chan error // cap 1; receives nil once msg is queued, or ErrMailboxClosed
	prev, next *waiter[T]
	queued     bool // in the waiter list; guarded by the mailbox's mu
}

// NewBounded returns an empty Bounded mailbox of the given capacity and
// overflow policy. It panics if capacity is less than 1 or overflow is not
// one of Fail, DropNewest, DropOldest and Backpressure.
func NewBounded[T any](capacity int, overflow Overflow) *Bounded[T] {
	if capacity < 1 {
		panic("crew: NewBounded: capacity must be at least 1, got " + strconv.Itoa(capacity))
	}
	if overflow < Fail || overflow > Backpressure {
		panic("crew: NewBounded: unknown overflow policy " + overflow.String())
	}
	b := &Bounded[T]{overflow: overflow, capacity: capacity, waiters: shared[freeList[waiter[T]]]()}
	b.q.buf = make([]T, capacity)
	return b
}

// Enqueue appends msg if there is room, and otherwise applies the mailbox's
// Overflow policy (see Bounded). After Close it returns ErrMailboxClosed.
// Only Backpressure uses ctx: if there is room, Enqueue succeeds even when
// ctx is already done.
func (b *Bounded[T]) Enqueue(ctx context.Context, msg T) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return ErrMailboxClosed
	}
	if !b.q.full() {
		b.q.push(msg)
		b.n.Add(1)
		b.mu.Unlock()
		return nil
	}
	switch b.overflow {
	case DropNewest:
		b.mu.Unlock()
		b.dropped.Add(1)
		return ErrDropped
	case DropOldest:
		old, _ := b.q.pop()
		b.q.push(msg)
		b.mu.Unlock()
		b.dropped.Add(1)
		if hook := b.hook.Load(); hook != nil {
			(*hook)(old, ErrEvicted)
		}
		return nil
	case Backpressure:
		return b.wait(ctx, msg)
	}
	b.mu.Unlock()
	return ErrMailboxFull
}

// wait queues msg behind the earlier blocked senders and blocks until a
// Dequeue moves it into the ring, ctx is done or Close. It is called with mu
// held and releases it.
func (b *Bounded[T]) wait(ctx context.Context, msg T) error {
	if err := ctx.Err(); err != nil {
		b.mu.Unlock()
		return err
	}
	w := b.waiters.get()
	if w.ready == nil {
		w.ready = make(chan error, 1)
	}
	w.msg = msg
	w.prev, w.next, w.queued = b.last, nil, true
	if b.last == nil {
		b.first = w
	} else {
		b.last.next = w
	}
	b.last = w
	b.mu.Unlock()

	var err error
	select {
	case err = <-w.ready:
	case <-ctx.Done():
		b.mu.Lock()
		if w.queued {
			// Still waiting: withdraw, and the caller keeps msg.
			b.unlink(w)
			b.mu.Unlock()
			err = ctx.Err()
		} else {
			// A Dequeue or Close dequeued w before we took the lock; it sent
			// the outcome while holding mu, so this receive does not block.
			// If msg was accepted, reporting ctx.Err() would be a lie.
			b.mu.Unlock()
			err = <-w.ready
		}
	}
	var zero T
	w.msg = zero
	b.waiters.put(w)
	return err
}

// unlink removes w from the waiter list. mu must be held.
func (b *Bounded[T]) unlink(w *waiter[T]) {
	if w.prev == nil {
		b.first = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		b.last = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
}

// Dequeue removes and returns the oldest message, or ok == false when the
// mailbox is empty or closed. If a Backpressure sender is blocked, its
// message takes the freed slot and the sender returns nil.
func (b *Bounded[T]) Dequeue() (msg T, ok bool) {
	b.mu.Lock()
	msg, ok = b.q.pop()
	if ok {
		if w := b.first; w != nil {
			b.unlink(w)
			b.q.push(w.msg)
			w.ready <- nil // Len is unchanged: one message out, one in
		} else {
			b.n.Add(-1)
		}
	}
	b.mu.Unlock()
	return msg, ok
}

// Len reports the number of queued messages, not counting blocked senders.
func (b *Bounded[T]) Len() int { return int(b.n.Load()) }

// Cap reports the mailbox's capacity.
func (b *Bounded[T]) Cap() int { return b.capacity }

// Full reports whether the mailbox is at capacity, so that an Enqueue would
// apply the overflow policy. It is O(1) and lock-free, and like Len it may be
// stale by the time the caller acts on it.
func (b *Bounded[T]) Full() bool { return int(b.n.Load()) >= b.capacity }

// Overflow reports the mailbox's overflow policy.
func (b *Bounded[T]) Overflow() Overflow { return b.overflow }

// Dropped reports how many messages the overflow policy has discarded since
// NewBounded: incoming ones refused by DropNewest and queued ones evicted by
// DropOldest. Fail and Backpressure never discard.
func (b *Bounded[T]) Dropped() int64 { return b.dropped.Load() }

// OnDrop installs hook to receive each message a DropOldest eviction
// discards, with reason ErrEvicted; nil removes it. The hook runs on the
// evicting Enqueue's goroutine after the lock is released. Without a hook an
// evicted message is only counted by Dropped. See Dropper.
func (b *Bounded[T]) OnDrop(hook func(msg T, reason error)) {
	if hook == nil {
		b.hook.Store(nil)
		return
	}
	b.hook.Store(&hook)
}

// Close disposes of the mailbox, returns the queued messages oldest first,
// and wakes every blocked sender with ErrMailboxClosed. Later calls return nil.
func (b *Bounded[T]) Close() []T {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	rest := b.q.drain(nil)
	b.q.buf = nil
	b.n.Store(0)
	for b.first != nil {
		w := b.first
		b.unlink(w)
		w.ready <- ErrMailboxClosed
	}
	return rest
}
