package crew

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/crewlib/crew/internal/queue"
)

// A Priority is a mailbox that hands out the most urgent message first:
// less(a, b) true means a runs before b. It is a binary heap, so Enqueue and
// Dequeue are O(log n) where n = Len(), each calling less O(log n) times.
//
// Four constructors choose the variant:
//
//	                 equal priority: any order     equal priority: FIFO
//	unbounded        NewPriority                   NewStablePriority
//	bounded          NewBoundedPriority            NewBoundedStablePriority
//
// The stable variants stamp each message with its arrival number and break
// ties with it, at the price of up to two calls to less per comparison. A
// full bounded Priority rejects the new message with ErrMailboxFull; Enqueue
// never blocks. The heap's array doubles when full; when the mailbox drains,
// an array larger than 64 slots is released. Outgrown and released arrays go
// to a process-wide pool per element type, as Unbounded's do, so steady
// traffic allocates nothing.
//
// less runs while the mailbox's lock is held: it must be fast, must not call
// into the mailbox, and must not panic: a panic reaches the caller and
// releases the lock, but may lose the message being moved or leave the heap
// out of order.
//
// A Priority is safe for concurrent use. The zero value is not usable: create
// one with one of the constructors.
type Priority[T any] struct {
	n        atomic.Int64 // queued messages; written under mu, read lock-free by Len
	capacity int          // 0 for unbounded

	mu     sync.Mutex  // guards q, seq and closed
	q      prioHeap[T] // its array shared by all Priority[T]
	seq    uint64      // arrival number of the next message
	closed bool
}

// NewPriority returns an unbounded Priority mailbox ordered by less. Messages
// of equal priority come out in no particular order. It panics if less is nil.
func NewPriority[T any](less func(a, b T) bool) *Priority[T] {
	return newPriority("NewPriority", 0, less, false)
}

// NewStablePriority returns an unbounded Priority mailbox ordered by less, in
// which messages of equal priority come out in arrival order. It panics if
// less is nil.
func NewStablePriority[T any](less func(a, b T) bool) *Priority[T] {
	return newPriority("NewStablePriority", 0, less, true)
}

// NewBoundedPriority returns a Priority mailbox ordered by less that holds at
// most capacity messages. Messages of equal priority come out in no
// particular order. Any capacity from 1 to math.MaxInt is a bound, not an
// allocation: the heap grows as messages queue. It panics if capacity is
// less than 1 or less is nil.
func NewBoundedPriority[T any](capacity int, less func(a, b T) bool) *Priority[T] {
	checkPriorityCapacity("NewBoundedPriority", capacity)
	return newPriority("NewBoundedPriority", capacity, less, false)
}

// NewBoundedStablePriority returns a Priority mailbox ordered by less that
// holds at most capacity messages, in which messages of equal priority come
// out in arrival order. Any capacity from 1 to math.MaxInt is a bound, as
// NewBoundedPriority's is. It panics if capacity is less than 1 or less is
// nil.
func NewBoundedStablePriority[T any](capacity int, less func(a, b T) bool) *Priority[T] {
	checkPriorityCapacity("NewBoundedStablePriority", capacity)
	return newPriority("NewBoundedStablePriority", capacity, less, true)
}

func checkPriorityCapacity(fn string, capacity int) {
	if capacity < 1 {
		panic("crew: " + fn + ": capacity must be at least 1, got " + strconv.Itoa(capacity))
	}
}

func newPriority[T any](fn string, capacity int, less func(a, b T) bool, stable bool) *Priority[T] {
	if less == nil {
		panic("crew: " + fn + ": nil less function")
	}
	return &Priority[T]{capacity: capacity, q: prioHeap[T]{less: less, stable: stable, bufs: queue.Shared[queue.Slabs[prioItem[T]]]()}}
}

// Enqueue adds msg. A full bounded mailbox returns ErrMailboxFull and stores
// nothing; after Close Enqueue returns ErrMailboxClosed. It never blocks, so
// ctx is ignored. If less panics, Enqueue stores nothing and the panic goes
// on to the caller, the mailbox unlocked and unchanged.
func (p *Priority[T]) Enqueue(_ context.Context, msg T) error {
	if p.q.less == nil {
		unmadeMailbox("Priority", "NewPriority (or another of its constructors)")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrMailboxClosed
	}
	if p.capacity > 0 && p.q.len() >= p.capacity {
		return ErrMailboxFull
	}
	p.q.push(prioItem[T]{msg: msg, seq: p.seq}) // if less panics, the heap stays as it was
	p.seq++
	p.n.Add(1)
	return nil
}

// Dequeue removes and returns the most urgent message, or ok == false when
// the mailbox is empty or closed.
func (p *Priority[T]) Dequeue() (msg T, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.q.len() == 0 {
		return msg, false
	}
	p.n.Add(-1)
	it, _ := p.q.pop()
	return it.msg, true
}

// Len reports the number of queued messages.
func (p *Priority[T]) Len() int { return int(p.n.Load()) }

// Cap reports the capacity of a bounded Priority, or 0 if it is unbounded.
func (p *Priority[T]) Cap() int { return p.capacity }

// Full reports whether a bounded Priority is at capacity, so that Enqueue
// would return ErrMailboxFull; an unbounded one is never full. It is O(1) and
// lock-free, and may be stale by the time the caller acts on it.
func (p *Priority[T]) Full() bool {
	return p.capacity > 0 && int(p.n.Load()) >= p.capacity
}

// Close disposes of the mailbox and returns the queued messages in the order
// Dequeue would have returned them, in O(n log n). Later calls return nil.
func (p *Priority[T]) Close() []T {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	var rest []T
	if p.q.len() > 0 {
		rest = make([]T, 0, p.q.len())
	}
	for it, ok := p.q.pop(); ok; it, ok = p.q.pop() {
		rest = append(rest, it.msg)
	}
	p.q.release()
	p.n.Store(0)
	return rest
}
