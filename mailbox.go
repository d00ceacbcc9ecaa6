package crew

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/crewlib/crew/internal/queue"
)

// A Mailbox is the queue an actor drains. Every mailbox in this package is
// safe for concurrent use by any number of producers and consumers, like a
// channel, and keeps an exact count of its messages through every path
// (drops, evictions, Close), which Len reads without a lock, so a router can
// read it from any goroutine to pick the least loaded actor.
//
// Nothing a mailbox accepts is lost silently: it is returned by Dequeue or by
// Close, or, when the mailbox discards it on its own (a DropOldest eviction),
// handed to the hook installed through [Dropper]. A message a mailbox does not
// accept stays with the caller, who gets an error from Enqueue.
//
// You can implement Mailbox yourself; document any departure from FIFO.
type Mailbox[T any] interface {
	// Enqueue adds msg and returns nil if the mailbox accepted it. A full
	// bounded mailbox returns ErrMailboxFull (or an error wrapping it), or
	// blocks until room, ctx done (returning ctx.Err()) or Close, as its
	// overflow policy says. After Close it returns ErrMailboxClosed.
	// Mailboxes that never block ignore ctx.
	Enqueue(ctx context.Context, msg T) error

	// Dequeue removes and returns the next message without blocking. It
	// returns ok == false when the mailbox is empty or closed. (A
	// Segmented's Dequeue may wait for an Enqueue that has taken the next
	// place in line to write its message there: a few instructions, unless
	// that goroutine was descheduled between them.)
	Dequeue() (msg T, ok bool)

	// Len reports the number of queued messages. It is O(1) and safe to call
	// from any goroutine; it never blocks.
	Len() int

	// Close disposes of the mailbox and returns the messages still queued,
	// in the order Dequeue would have returned them. Afterwards Enqueue
	// returns ErrMailboxClosed, Dequeue returns ok == false, Len returns 0,
	// and senders blocked in Enqueue wake with ErrMailboxClosed (their
	// messages were never accepted, so Close does not return them). Close is
	// idempotent: later calls return nil.
	Close() []T
}

// A Dropper is a Mailbox that can discard a message it has already accepted:
// a [Bounded] with the DropOldest policy evicts its oldest message to make
// room for a newer one. Such a message has no caller left to return an error
// to, so the mailbox hands it to a hook installed by its owner; an actor
// installs one that turns the message into a dead letter.
type Dropper[T any] interface {
	Mailbox[T]

	// OnDrop installs hook, replacing any earlier one; nil removes it. The
	// hook receives each discarded message with the reason, an error
	// matching ErrEvicted. It runs on the goroutine whose Enqueue caused the
	// drop, after the mailbox has released its lock, so it may use the
	// mailbox again. Install it before the mailbox is shared.
	OnDrop(hook func(msg T, reason error))
}

// Overflow is what a full bounded mailbox does with a new message.
type Overflow int

const (
	// Fail rejects the new message: Enqueue returns ErrMailboxFull.
	Fail Overflow = iota
	// DropNewest discards the new message: Enqueue returns ErrDropped,
	// which wraps ErrMailboxFull. Use it when older data must be handled
	// and newer data is expendable.
	DropNewest
	// DropOldest evicts the oldest queued message, hands it to the drop
	// hook (see Dropper) and accepts the new one. Use it when the latest
	// data supersedes older data (status updates, sensor readings).
	DropOldest
	// Backpressure blocks the sender until room opens, its context is done
	// (Enqueue returns ctx.Err()) or the mailbox is closed (ErrMailboxClosed).
	// Blocked senders are served in arrival order.
	Backpressure
)

// String returns the policy's name, such as "DropOldest".
func (o Overflow) String() string {
	switch o {
	case Fail:
		return "Fail"
	case DropNewest:
		return "DropNewest"
	case DropOldest:
		return "DropOldest"
	case Backpressure:
		return "Backpressure"
	}
	return "Overflow(" + strconv.Itoa(int(o)) + ")"
}

// An Unbounded is a FIFO mailbox on a growable ring buffer. Enqueue never
// blocks and never fails before Close.
//
// Producers and consumers take different locks: Enqueue writes at the tail
// under one mutex, Dequeue reads at the head under another, and the two meet
// only through the atomic positions of head and tail. A producer therefore
// never waits for a consumer, or the reverse, except while the buffer grows
// (both locks are held to copy it). Enqueue and Dequeue are amortized O(1):
// one uncontended mutex and one atomic store each.
//
// The buffer doubles when full. When the mailbox drains, a buffer larger than
// 64 slots is released, so an idle mailbox that once held a burst does not
// keep its peak memory; one of 64 slots or fewer is kept, so shallow steady
// traffic allocates nothing. Released and outgrown buffers (up to 1<<20
// slots) go to a process-wide pool shared by every Unbounded of the same
// element type, from which the next burst regrows without allocating; the
// garbage collector reclaims what the pool does not reuse.
//
// An Unbounded is safe for concurrent use. The zero value is not usable:
// create one with NewUnbounded.
type Unbounded[T any] struct {
	bufs *queue.Slabs[T] // shared by all Unbounded[T]; set by NewUnbounded

	// buf and box change only while both locks are held, so each side reads
	// them under its own. Message p (counting from 0 since NewUnbounded)
	// lives in buf[p&(len(buf)-1)]; len(buf) is 0 or a power of two.
	buf []T
	box *queue.Slab[T] // holds buf if it came from bufs

	// Each side's lock, position and cached copy of the other side's
	// position share a cache line of their own. A side reads the other's
	// position only when its cached copy says the buffer looks empty
	// (consumers) or full (producers).
	_ [64]byte

	// The consumers' side.
	headMu   sync.Mutex    // guards reading and clearing the slot at head
	head     atomic.Uint64 // position of the oldest message; stored under headMu
	tailSeen uint64        // a past value of tail; guarded by headMu
	_        [64]byte

	// The producers' side. Lock order: tailMu before headMu.
	tailMu   sync.Mutex    // guards writing the slot at tail, and closed
	tail     atomic.Uint64 // position after the newest; stored under tailMu
	headSeen uint64        // a past value of head; guarded by tailMu
	closed   bool
}

// NewUnbounded returns an empty Unbounded mailbox. It allocates its buffer on
// the first Enqueue.
func NewUnbounded[T any]() *Unbounded[T] {
	return &Unbounded[T]{bufs: queue.Shared[queue.Slabs[T]]()}
}

// unmadeMailbox panics for the Enqueue of a zero mailbox of kind, which
// ctor makes: each mailbox tests for it where it is cheap (as it first
// makes room, or before the call that would dereference nil), and never
// refuses, blocks or crashes quietly instead.
func unmadeMailbox(kind, ctor string) {
	panic("crew: " + kind + ".Enqueue: the " + kind + " was not made by " + ctor + ": use it")
}

// Enqueue appends msg. It returns ErrMailboxClosed after Close and nil
// otherwise; it never blocks, so ctx is ignored.
func (u *Unbounded[T]) Enqueue(_ context.Context, msg T) error {
	u.tailMu.Lock()
	if u.closed {
		u.tailMu.Unlock()
		return ErrMailboxClosed
	}
	t := u.tail.Load()
	// headSeen is at most head, so t-headSeen overstates the count: when it
	// says there is room, there is. Otherwise look again.
	if t-u.headSeen >= uint64(len(u.buf)) {
		if u.headSeen = u.head.Load(); t-u.headSeen == uint64(len(u.buf)) {
			u.grow(t)
		}
	}
	u.buf[t&uint64(len(u.buf)-1)] = msg
	u.tail.Store(t + 1) // publishes the message to consumers and to Len
	u.tailMu.Unlock()
	return nil
}

// grow doubles the buffer, which holds the messages from head to t, unless a
// consumer made room meanwhile. tailMu is held.
func (u *Unbounded[T]) grow(t uint64) {
	if u.bufs == nil { // a zero Unbounded's first Enqueue
		u.tailMu.Unlock()
		unmadeMailbox("Unbounded", "NewUnbounded")
	}
	u.headMu.Lock()
	defer u.headMu.Unlock()
	h := u.head.Load()
	if t-h < uint64(len(u.buf)) {
		return
	}
	size := max(2*len(u.buf), queue.MinRingSlots)
	buf, box := u.bufs.Take(size)
	for p := h; p < t; p++ {
		buf[p&uint64(size-1)] = u.buf[p&uint64(len(u.buf)-1)]
	}
	clear(u.buf)
	u.release()
	u.buf, u.box = buf, box
}

// release drops the buffer, recycling it if it came from the pool. Both
// locks are held, and every slot is zero: dequeued or cleared by the caller.
func (u *Unbounded[T]) release() {
	u.bufs.Give(u.box)
	u.buf, u.box = nil, nil
}

// Dequeue removes and returns the oldest message, or ok == false when the
// mailbox is empty or closed.
func (u *Unbounded[T]) Dequeue() (msg T, ok bool) {
	u.headMu.Lock()
	h, t := u.head.Load(), u.tailSeen
	if h == t { // tailSeen is at most tail: look again
		if t = u.tail.Load(); h == t {
			u.headMu.Unlock()
			return msg, false
		}
		u.tailSeen = t
	}
	var zero T
	i := h & uint64(len(u.buf)-1)
	msg, u.buf[i] = u.buf[i], zero
	u.head.Store(h + 1) // after clearing: the producer may now reuse the slot
	if h+1 == t && len(u.buf) > queue.KeptRingSlots {
		u.releaseIfDrained()
	}
	u.headMu.Unlock()
	return msg, true
}

// releaseIfDrained releases a large buffer once the mailbox is empty. It
// needs the producers' lock too; it only tries it, since headMu is held and
// producers take the locks in the other order. If a producer holds it, the
// mailbox is not staying empty and a later Dequeue will try again.
func (u *Unbounded[T]) releaseIfDrained() {
	if !u.tailMu.TryLock() {
		return
	}
	if u.tail.Load() == u.head.Load() {
		u.release()
	}
	u.tailMu.Unlock()
}

// counters gives a Ref the positions Len subtracts (see counted).
func (u *Unbounded[T]) counters() (in, out *atomic.Uint64) { return &u.tail, &u.head }

// Len reports the number of queued messages: the exact count at one
// instant during the call. The one exception is a storm of Enqueues that
// changes the count under each of Len's 32 tries: Len then returns a count
// that may leave out messages enqueued during the call, and is never above
// the count at some instant during it.
func (u *Unbounded[T]) Len() int { return countBetween(&u.tail, &u.head) }

// countBetween returns in - out, for two counters that only grow, out never
// passing in. Reading out and then in would be wrong: while the reader is
// paused between the two loads, any number of messages can go in and out,
// and the difference would count all of them. So it reads in, out, then in
// again, and retries while in moved: when it did not, in was the same at the
// instant out was read, and the result is the exact count at that instant.
// Under a storm of sends that defeats every try, it settles for the first
// reading of in against the last of out, which can only understate the
// count (by the sends that raced it), never overstate it.
func countBetween(in, out *atomic.Uint64) int { return countUntil(in, out, 0, 0) }

// countUntil is countBetween for an out counter kept shifted left by shift
// bits, with flags in the bits below, and an in counter that carries the
// bits closed once the mailbox is closed: the count is 0 from then on.
func countUntil(in, out *atomic.Uint64, shift uint, closed uint64) int {
	i := in.Load()
	for try := 1; ; try++ {
		if i&closed != 0 {
			return 0
		}
		o := out.Load() >> shift
		j := in.Load()
		switch {
		case j == i:
			return int(i - o)
		case try == 32: // i was read before o: this never overstates
			if o > i {
				return 0
			}
			return int(i - o)
		}
		i = j
	}
}

// Cap reports how many messages the current buffer holds before it grows:
// 0 before the first Enqueue, and at most 64 once the mailbox has drained.
func (u *Unbounded[T]) Cap() int {
	u.headMu.Lock()
	defer u.headMu.Unlock()
	return len(u.buf)
}

// Close disposes of the mailbox and returns the queued messages, oldest
// first. Later calls return nil.
func (u *Unbounded[T]) Close() []T {
	u.tailMu.Lock()
	defer u.tailMu.Unlock()
	u.headMu.Lock()
	defer u.headMu.Unlock()
	u.closed = true
	h, t := u.head.Load(), u.tail.Load()
	var rest []T
	if t > h {
		rest = make([]T, 0, t-h)
	}
	for p := h; p < t; p++ {
		rest = append(rest, u.buf[p&uint64(len(u.buf)-1)])
	}
	u.head.Store(t)
	u.headSeen, u.tailSeen = t, t
	clear(u.buf)
	u.release()
	return rest
}
