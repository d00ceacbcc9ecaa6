package crew

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
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
	less     func(a, b T) bool
	stable   bool
	capacity int // 0 for unbounded

	bufs *slabs[prioItem[T]] // shared by all Priority[T]

	mu     sync.Mutex // guards h, box, seq and closed
	h      []prioItem[T]
	box    *slab[prioItem[T]] // holds h's array if it came from bufs
	seq    uint64             // arrival number of the next message
	closed bool
}

// A prioItem is a queued message with its arrival number.
type prioItem[T any] struct {
	msg T
	seq uint64
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
// particular order. It panics if capacity is less than 1 or less is nil.
func NewBoundedPriority[T any](capacity int, less func(a, b T) bool) *Priority[T] {
	checkPriorityCapacity("NewBoundedPriority", capacity)
	return newPriority("NewBoundedPriority", capacity, less, false)
}

// NewBoundedStablePriority returns a Priority mailbox ordered by less that
// holds at most capacity messages, in which messages of equal priority come
// out in arrival order. It panics if capacity is less than 1 or less is nil.
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
	return &Priority[T]{less: less, stable: stable, capacity: capacity, bufs: shared[slabs[prioItem[T]]]()}
}

// Enqueue adds msg. A full bounded mailbox returns ErrMailboxFull and stores
// nothing; after Close Enqueue returns ErrMailboxClosed. It never blocks, so
// ctx is ignored.
func (p *Priority[T]) Enqueue(_ context.Context, msg T) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrMailboxClosed
	}
	if p.capacity > 0 && len(p.h) >= p.capacity {
		return ErrMailboxFull
	}
	if len(p.h) == cap(p.h) {
		p.grow()
	}
	p.h = append(p.h, prioItem[T]{msg: msg, seq: p.seq})
	p.seq++
	p.n.Add(1) // before up, which calls less: Len stays equal to len(h)
	p.up(len(p.h) - 1)
	return nil
}

// Dequeue removes and returns the most urgent message, or ok == false when
// the mailbox is empty or closed.
func (p *Priority[T]) Dequeue() (msg T, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.h) == 0 {
		return msg, false
	}
	p.n.Add(-1)
	msg = p.pop()
	if len(p.h) == 0 && cap(p.h) > keptRingSlots {
		p.release()
	}
	return msg, true
}

// grow doubles the heap's array, taking the new one from the shared pool and
// giving the old one back. mu is held.
func (p *Priority[T]) grow() {
	buf, box := p.bufs.take(max(2*cap(p.h), minRingSlots))
	n := copy(buf, p.h)
	clear(p.h)
	p.release()
	p.h, p.box = buf[:n], box
}

// release gives the heap's array, every slot of which is zero, back to the
// pool. mu is held.
func (p *Priority[T]) release() {
	p.bufs.give(p.box)
	p.h, p.box = nil, nil
}

// pop removes the root of the heap. mu must be held and h non-empty.
func (p *Priority[T]) pop() T {
	last := len(p.h) - 1
	msg := p.h[0].msg
	p.h[0] = p.h[last]
	p.h[last] = prioItem[T]{}
	p.h = p.h[:last]
	p.down(0)
	return msg
}

// before reports whether the item at i must come out before the one at j.
func (p *Priority[T]) before(i, j int) bool {
	a, b := &p.h[i], &p.h[j]
	if p.less(a.msg, b.msg) {
		return true
	}
	if !p.stable || p.less(b.msg, a.msg) {
		return false
	}
	return a.seq < b.seq
}

func (p *Priority[T]) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !p.before(i, parent) {
			return
		}
		p.h[i], p.h[parent] = p.h[parent], p.h[i]
		i = parent
	}
}

func (p *Priority[T]) down(i int) {
	n := len(p.h)
	for {
		first := 2*i + 1
		if first >= n {
			return
		}
		if right := first + 1; right < n && p.before(right, first) {
			first = right
		}
		if !p.before(first, i) {
			return
		}
		p.h[i], p.h[first] = p.h[first], p.h[i]
		i = first
	}
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
	if len(p.h) > 0 {
		rest = make([]T, 0, len(p.h))
	}
	for len(p.h) > 0 {
		rest = append(rest, p.pop())
	}
	p.release()
	p.n.Store(0)
	return rest
}
