package crew

import (
	"context"
	"sync"
	"sync/atomic"
)

// A Chan is a bounded FIFO mailbox on a buffered Go channel: the simplest
// adapter to the Mailbox interface, and the baseline the other mailboxes are
// measured against. A full Chan blocks the sender, like a channel send, until
// room, ctx done (Enqueue returns ctx.Err()) or Close (ErrMailboxClosed);
// unlike Bounded's Backpressure, blocked senders are not served in arrival
// order. Enqueue costs a channel send plus a read lock, Dequeue a
// non-blocking receive plus a read lock, which Close takes exclusively to
// drain the channel as one step.
//
// A Chan is safe for concurrent use. The zero value is not usable: create one
// with NewChan.
type Chan[T any] struct {
	ch      chan T
	done    chan struct{} // closed when Close begins: wakes blocked senders
	gone    chan struct{} // closed once Close has taken effect
	closing atomic.Bool   // Close began

	// mu is held shared by every other method, and exclusively by Close
	// while it drains ch and sets closed: that instant is when Close takes
	// effect, so no method sees a half-drained channel, and none sees the
	// mailbox closed before Close returns what it held. The channel itself
	// is never closed (a send on it would panic).
	mu     sync.RWMutex
	closed bool
}

// maxCapacity is the most messages a Chan or a Bounded holds: each
// allocates its buffer whole, as it is made.
const maxCapacity = 1 << 24

// NewChan returns an empty Chan that holds up to capacity messages, in a
// channel whose buffer it allocates whole. It panics if capacity is not
// between 1 and 1<<24: an unbuffered channel cannot hold a message for a
// non-blocking Dequeue, and a larger buffer is a bound better kept by an
// Unbounded with a check of its Len, or a bounded priority mailbox, which
// allocate as they fill.
func NewChan[T any](capacity int) *Chan[T] {
	checkSize("NewChan", "capacity", capacity, maxCapacity)
	return &Chan[T]{ch: make(chan T, capacity), done: make(chan struct{}), gone: make(chan struct{})}
}

// Enqueue sends msg on the channel, blocking while it is full. It returns nil
// once msg is queued, ctx.Err() if ctx ends first, and ErrMailboxClosed if the
// mailbox is or becomes closed first. If there is room, Enqueue succeeds even
// when ctx is already done. It panics if ctx is nil.
func (c *Chan[T]) Enqueue(ctx context.Context, msg T) error {
	if ctx == nil {
		panic("crew: Chan.Enqueue: nil context") // before the lock: ctx.Done under it would leave it held
	}
	if c.ch == nil { // a send on it would block for ever
		unmadeMailbox("Chan", "NewChan")
	}
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return ErrMailboxClosed
	}
	select {
	case c.ch <- msg:
		c.mu.RUnlock()
		return nil
	default:
	}
	select {
	case c.ch <- msg:
		c.mu.RUnlock()
		return nil
	case <-ctx.Done():
		c.mu.RUnlock()
		return ctx.Err()
	case <-c.done:
		// Close began, and waits for this sender to leave: return once
		// it has taken effect, not before.
		c.mu.RUnlock()
		<-c.gone
		return ErrMailboxClosed
	}
}

// Dequeue receives the oldest message without blocking, or ok == false when
// the mailbox is empty or closed.
func (c *Chan[T]) Dequeue() (msg T, ok bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return msg, false
	}
	select {
	case msg = <-c.ch:
		return msg, true
	default:
		return msg, false
	}
}

// Len reports the number of queued messages: len of the channel, 0 once
// closed.
func (c *Chan[T]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return 0
	}
	return len(c.ch)
}

// Cap reports the channel's capacity.
func (c *Chan[T]) Cap() int { return cap(c.ch) }

// Full reports whether the channel's buffer is full, so that Enqueue would
// block. It may be stale by the time the caller acts on it.
func (c *Chan[T]) Full() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return !c.closed && len(c.ch) == cap(c.ch)
}

// Close disposes of the mailbox, wakes blocked senders with ErrMailboxClosed
// and returns the queued messages, oldest first. Later calls return nil,
// and so does Close on a zero Chan, which holds nothing, as other zero
// mailboxes do.
func (c *Chan[T]) Close() []T {
	if c.ch == nil { // a zero Chan: its done and gone channels are nil too
		return nil
	}
	if !c.closing.CompareAndSwap(false, true) {
		<-c.gone // a later Close returns once the first has taken effect
		return nil
	}
	close(c.done)
	c.mu.Lock() // every sender has returned or waits for gone
	var rest []T
	for drained := false; !drained; {
		select {
		case msg := <-c.ch:
			rest = append(rest, msg)
		default:
			drained = true
		}
	}
	c.closed = true
	c.mu.Unlock()
	close(c.gone)
	return rest
}
