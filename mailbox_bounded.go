package crew

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/crewlib/crew/internal/queue"
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
//     strictly in arrival order: the room a Dequeue frees goes to the oldest
//     waiter, and a newcomer queues behind the waiters.
//
// Like Unbounded, a Bounded has separate producer and consumer locks that
// meet only through atomic positions, so producers and consumers do not
// contend with each other (a DropOldest eviction takes both). Enqueue and
// Dequeue are O(1): one uncontended mutex and one atomic store each, with
// no allocation, also when a sender blocks (waiters are recycled). A
// Dequeue that frees room for a blocked sender also takes the producers'
// lock to hand it over.
//
// A producer that outruns its consumer keeps a Backpressure Bounded full,
// and the two then take turns rather than run side by side: the goroutine
// that a Dequeue or an actor's Tell wakes is readied on the waker's own
// CPU, and an idle CPU can take tens of microseconds to wake and take it
// over, longer than the producer takes to refill a ring of 1024 slots. So
// a message through a full small ring costs about a producer's and a
// consumer's time added, where an Unbounded, whose producer never waits,
// costs the larger of the two (BenchmarkBoundedTurns measures both, and
// the consumer's parks, one per ring). Size the ring for the bound you
// need; one that holds what the producer writes in that wait (16384
// no-op messages on a 2-CPU virtual machine) costs what an Unbounded does.
//
// A Bounded is safe for concurrent use. The zero value is not usable: create
// one with NewBounded.
type Bounded[T any] struct {
	// Set by NewBounded (buf is dropped by Close, with both locks held).
	buf      []T
	capacity uint64
	overflow Overflow
	waiters  *queue.Waiters[T] // shared by all Bounded[T]
	hook     atomic.Pointer[func(T, error)]
	dropped  atomic.Int64 // messages discarded by DropNewest or DropOldest

	// evictions is odd while a DropOldest Enqueue moves head and tail
	// together (replace): Len does not read them then. Only DropOldest
	// writes it.
	_         [64]byte
	evictions atomic.Uint64

	// Blocked senders, counted on a line of its own: every Dequeue reads it
	// (to skip tailMu when 0) and blocking senders write it.
	_     [64]byte
	nwait atomic.Int32

	// Positions (messages counted since NewBounded), each on its own line.
	_    [64]byte
	head atomic.Uint64 // position of the oldest message; stored under headMu
	_    [64]byte
	tail atomic.Uint64 // position after the newest; stored under tailMu
	_    [64]byte

	// The consumers' side.
	headMu   sync.Mutex // guards reading the slot at head, and the fields below
	headIdx  int        // index in buf of position head
	tailSeen uint64     // a past value of tail
	_        [64]byte

	// The producers' side. Lock order: tailMu before headMu.
	tailMu   sync.Mutex                  // guards writing the slot at tail, and the fields below
	tailIdx  int                         // index in buf of position tail
	headSeen uint64                      // a past value of head
	waiting  queue.List[queue.Waiter[T]] // blocked Backpressure senders, oldest first
	closed   bool
}

// NewBounded returns an empty Bounded mailbox of the given capacity and
// overflow policy. It allocates its ring whole, as make(chan T, capacity)
// allocates a channel's buffer, so that no message ever costs an
// allocation or a copy of the ring. It panics if capacity is not between
// 1 and 1<<24 (a larger one is a bound better kept by an Unbounded with a
// check of its Len, or a bounded priority mailbox, which allocate as they
// fill), or if overflow is not one of Fail, DropNewest, DropOldest and
// Backpressure.
func NewBounded[T any](capacity int, overflow Overflow) *Bounded[T] {
	checkSize("NewBounded", "capacity", capacity, maxCapacity)
	if overflow < Fail || overflow > Backpressure {
		panic("crew: NewBounded: unknown overflow policy " + overflow.String())
	}
	return &Bounded[T]{
		buf:      make([]T, capacity),
		capacity: uint64(capacity),
		overflow: overflow,
		waiters:  queue.Shared[queue.Waiters[T]](),
	}
}

// Enqueue appends msg if there is room, and otherwise applies the mailbox's
// Overflow policy (see Bounded). After Close it returns ErrMailboxClosed.
// Only Backpressure uses ctx: if there is room, Enqueue succeeds even when
// ctx is already done; with Backpressure, it panics if ctx is nil.
func (b *Bounded[T]) Enqueue(ctx context.Context, msg T) error {
	if ctx == nil && b.overflow == Backpressure {
		panic("crew: Bounded.Enqueue: nil context") // before the lock: ctx.Done under it would leave it held
	}
	b.tailMu.Lock()
	if b.closed {
		b.tailMu.Unlock()
		return ErrMailboxClosed
	}
	if b.waiting.Len() == 0 && b.room() {
		b.push(msg)
		b.tailMu.Unlock()
		return nil
	}
	if b.capacity == 0 { // a zero Bounded, always full
		b.tailMu.Unlock()
		unmadeMailbox("Bounded", "NewBounded")
	}
	switch b.overflow {
	case DropNewest:
		b.tailMu.Unlock()
		b.dropped.Add(1)
		return ErrDropped
	case DropOldest:
		old, evicted := b.replace(msg)
		b.tailMu.Unlock()
		if evicted {
			b.dropped.Add(1)
			if hook := b.hook.Load(); hook != nil {
				(*hook)(old, ErrEvicted)
			}
		}
		return nil
	case Backpressure:
		return b.wait(ctx, msg)
	}
	b.tailMu.Unlock()
	return ErrMailboxFull
}

// room reports whether a message fits. tailMu is held.
func (b *Bounded[T]) room() bool {
	// headSeen is at most head, so this overstates the count: when it says
	// there is room, there is. Otherwise look again.
	t := b.tail.Load()
	if t-b.headSeen < b.capacity {
		return true
	}
	b.headSeen = b.head.Load()
	return t-b.headSeen < b.capacity
}

// push writes msg at the tail and publishes it. tailMu is held, and there
// is room.
func (b *Bounded[T]) push(msg T) {
	b.buf[b.tailIdx] = msg
	if b.tailIdx++; b.tailIdx == len(b.buf) {
		b.tailIdx = 0
	}
	b.tail.Add(1)
}

// replace removes the oldest message to make room, unless a consumer
// already did, and pushes msg, as one step: under headMu, so that no
// Dequeue finds the mailbox between the two, and between two increments of
// evictions, so that Len does not count it there either. tailMu is held.
func (b *Bounded[T]) replace(msg T) (old T, evicted bool) {
	b.evictions.Add(1) // odd: head and tail are moving
	b.headMu.Lock()
	if h := b.head.Load(); b.tail.Load()-h >= b.capacity {
		old, evicted = b.take(), true
		b.head.Store(h + 1)
	}
	b.push(msg)
	b.headMu.Unlock()
	b.evictions.Add(1)
	return old, evicted
}

// take reads and clears the slot at head. headMu is held, and the mailbox
// is not empty.
func (b *Bounded[T]) take() T {
	var zero T
	msg := b.buf[b.headIdx]
	b.buf[b.headIdx] = zero
	if b.headIdx++; b.headIdx == len(b.buf) {
		b.headIdx = 0
	}
	return msg
}

// wait queues msg behind the earlier blocked senders and blocks until it is
// moved into the ring, ctx is done or Close. It is called with tailMu held
// and releases it.
func (b *Bounded[T]) wait(ctx context.Context, msg T) error {
	if err := ctx.Err(); err != nil {
		b.tailMu.Unlock()
		return err
	}
	w := b.waiters.Get()
	w.Msg = msg
	b.waiting.PushBack(&w.Links)
	// Count the waiter before looking at head once more: a Dequeue stores
	// head before it reads nwait, so either it sees this waiter and admits
	// it, or admit here sees the room that Dequeue freed. No wake-up is lost.
	b.nwait.Add(1)
	b.admit()
	b.tailMu.Unlock()

	var err error
	if done := ctx.Done(); done == nil {
		err = w.Outcome() // a context that never ends: a plain receive is cheaper
	} else {
		select {
		case <-w.Ready():
			err = w.Received()
		case <-done:
			err = b.withdraw(ctx, w)
		}
	}
	var zero T
	w.Msg = zero
	b.waiters.Put(w)
	return err
}

// withdraw takes w out of the waiter list after its context ended, and
// returns what Enqueue should: ctx.Err(), unless w was admitted or the
// mailbox closed first.
func (b *Bounded[T]) withdraw(ctx context.Context, w *queue.Waiter[T]) error {
	b.tailMu.Lock()
	if w.Links.Listed() {
		b.unlink(w) // still waiting: the caller keeps msg
		b.tailMu.Unlock()
		return ctx.Err()
	}
	// Admitted or closed before we took the lock. The outcome was sent while
	// tailMu was held, so this receive does not block; if msg was accepted,
	// reporting ctx.Err() would be a lie.
	b.tailMu.Unlock()
	return w.Outcome()
}

// admit moves blocked senders' messages into the ring, oldest first, while
// there is room. tailMu is held.
func (b *Bounded[T]) admit() {
	for w := b.waiting.Front(); w != nil && b.room(); w = b.waiting.Front() {
		b.unlink(w)
		b.push(w.Msg)
		w.Answer(nil)
	}
}

// unlink removes w from the waiter list. tailMu is held.
func (b *Bounded[T]) unlink(w *queue.Waiter[T]) {
	b.waiting.Remove(&w.Links)
	b.nwait.Add(-1)
}

// Dequeue removes and returns the oldest message, or ok == false when the
// mailbox is empty or closed. If a Backpressure sender is blocked, the room
// it frees goes to the oldest one, which then returns nil.
func (b *Bounded[T]) Dequeue() (msg T, ok bool) {
	b.headMu.Lock()
	h := b.head.Load()
	// tailSeen is at most tail, but a DropOldest eviction may have moved
	// head past it: unless h is below it, look again.
	if h >= b.tailSeen {
		if b.tailSeen = b.tail.Load(); h == b.tailSeen {
			b.headMu.Unlock()
			return msg, false
		}
	}
	msg = b.take()
	b.head.Store(h + 1)
	b.headMu.Unlock()
	// The slot goes to a blocked sender now, not once a batch of slots is
	// free (which would wake senders less often): a consumer may block
	// before it frees the rest of a batch, as an actor does in its own Tell
	// to an actor that tells it back, and the sender would then wait beside
	// room for good.
	if b.nwait.Load() > 0 {
		b.tailMu.Lock()
		b.admit()
		b.tailMu.Unlock()
	}
	return msg, true
}

// counters gives a Ref the positions Len subtracts (see counted).
func (b *Bounded[T]) counters() (in, out *atomic.Uint64) { return &b.tail, &b.head }

// Len reports the number of queued messages, not counting blocked senders:
// the exact count at one instant during the call, never above the
// capacity. The one exception is a storm of Enqueues that changes the count
// under each of Len's 32 tries: Len then returns a count that may leave out
// messages enqueued during the call, and is never above the count at some
// instant during it.
func (b *Bounded[T]) Len() int {
	for try := 1; ; try++ {
		v := b.evictions.Load()
		n := countBetween(&b.tail, &b.head)
		if v&1 == 0 && b.evictions.Load() == v {
			return min(n, int(b.capacity))
		}
		if try%32 == 0 {
			runtime.Gosched() // the evicting Enqueue may have been preempted
		}
	}
}

// Cap reports the mailbox's capacity.
func (b *Bounded[T]) Cap() int { return int(b.capacity) }

// Full reports whether the mailbox is at capacity, so that an Enqueue would
// apply the overflow policy. It is O(1) and lock-free, and like Len it may be
// stale by the time the caller acts on it.
func (b *Bounded[T]) Full() bool { return b.Len() == int(b.capacity) }

// Overflow reports the mailbox's overflow policy.
func (b *Bounded[T]) Overflow() Overflow { return b.overflow }

// Dropped reports how many messages the overflow policy has discarded since
// NewBounded: incoming ones refused by DropNewest and queued ones evicted by
// DropOldest. Fail and Backpressure never discard.
func (b *Bounded[T]) Dropped() int64 { return b.dropped.Load() }

// OnDrop installs hook to receive each message a DropOldest eviction
// discards, with reason ErrEvicted; nil removes it. The hook runs on the
// evicting Enqueue's goroutine after the locks are released. Without a hook
// an evicted message is only counted by Dropped. See Dropper.
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
	b.tailMu.Lock()
	defer b.tailMu.Unlock()
	b.headMu.Lock()
	defer b.headMu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	h, t := b.head.Load(), b.tail.Load()
	var rest []T
	if t > h {
		rest = make([]T, 0, t-h)
	}
	for range t - h {
		rest = append(rest, b.take())
	}
	b.head.Store(t)
	b.headSeen, b.tailSeen = t, t
	b.buf = nil
	for w := b.waiting.Front(); w != nil; w = b.waiting.Front() {
		b.unlink(w)
		w.Answer(ErrMailboxClosed)
	}
	return rest
}
