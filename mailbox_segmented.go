package crew

import (
	"context"
	"sync"
	"sync/atomic"
)

// segmentSlots is the number of messages one Segmented segment holds.
const segmentSlots = 256

// A segment is one fixed block of a Segmented mailbox's linked list.
type segment[T any] struct {
	buf  [segmentSlots]T
	next *segment[T]
}

// A Segmented is an unbounded FIFO mailbox on a linked list of fixed
// 256-message segments. Unlike Unbounded it never copies queued messages to
// grow: a burst links new segments, and each drained segment goes back to a
// process-wide pool shared by every Segmented mailbox of the same element
// type, from which the next burst takes it. Steady traffic, bursty or not,
// therefore allocates nothing per message, and a drained mailbox holds no
// segment at all: the pooled ones are reused by other mailboxes or reclaimed
// by the garbage collector.
//
// Enqueue never blocks and never fails before Close. Enqueue and Dequeue are
// O(1): one uncontended mutex and one atomic add each, plus a pool Get or Put
// once per 256 messages (or each time the mailbox drains). Use it for
// high-throughput, bursty fan-in, and for large messages, which Unbounded
// would copy on each growth.
//
// A Segmented is safe for concurrent use. The zero value is not usable:
// create one with NewSegmented.
type Segmented[T any] struct {
	n    atomic.Int64          // queued messages; written under mu, read lock-free by Len
	segs *freeList[segment[T]] // shared by all Segmented[T]; set by NewSegmented

	mu     sync.Mutex  // guards the fields below
	head   *segment[T] // oldest segment, read at r; nil when empty
	tail   *segment[T] // newest segment, written at w; nil when empty
	r, w   int
	closed bool
}

// NewSegmented returns an empty Segmented mailbox. It takes its first segment
// on the first Enqueue.
func NewSegmented[T any]() *Segmented[T] {
	return &Segmented[T]{segs: shared[freeList[segment[T]]]()}
}

// Enqueue appends msg. It returns ErrMailboxClosed after Close and nil
// otherwise; it never blocks, so ctx is ignored.
func (s *Segmented[T]) Enqueue(_ context.Context, msg T) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrMailboxClosed
	}
	switch {
	case s.tail == nil:
		seg := s.segs.get()
		s.head, s.tail, s.r, s.w = seg, seg, 0, 0
	case s.w == segmentSlots:
		seg := s.segs.get()
		s.tail.next, s.tail, s.w = seg, seg, 0
	}
	s.tail.buf[s.w] = msg
	s.w++
	s.n.Add(1)
	s.mu.Unlock()
	return nil
}

// Dequeue removes and returns the oldest message, or ok == false when the
// mailbox is empty or closed.
func (s *Segmented[T]) Dequeue() (msg T, ok bool) {
	s.mu.Lock()
	if s.head == nil {
		s.mu.Unlock()
		return msg, false
	}
	var zero T
	msg, s.head.buf[s.r] = s.head.buf[s.r], zero
	s.r++
	s.n.Add(-1)
	switch {
	case s.head == s.tail && s.r == s.w: // drained: hand the last segment back
		s.recycle(s.head)
		s.head, s.tail, s.r, s.w = nil, nil, 0, 0
	case s.r == segmentSlots: // head segment used up: move to the next one
		old := s.head
		s.head, s.r = old.next, 0
		s.recycle(old)
	}
	s.mu.Unlock()
	return msg, true
}

// recycle returns a segment whose slots are all cleared to the pool.
func (s *Segmented[T]) recycle(seg *segment[T]) {
	seg.next = nil
	s.segs.put(seg)
}

// Len reports the number of queued messages.
func (s *Segmented[T]) Len() int { return int(s.n.Load()) }

// Cap reports how many message slots the mailbox holds now: 256 per linked
// segment, and 0 once it has drained.
func (s *Segmented[T]) Cap() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	slots := 0
	for seg := s.head; seg != nil; seg = seg.next {
		slots += segmentSlots
	}
	return slots
}

// Close disposes of the mailbox and returns the queued messages, oldest
// first. Later calls return nil.
func (s *Segmented[T]) Close() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var rest []T
	if n := s.n.Load(); n > 0 {
		rest = make([]T, 0, n)
	}
	for seg := s.head; seg != nil; {
		end := segmentSlots
		if seg == s.tail {
			end = s.w
		}
		rest = append(rest, seg.buf[s.r:end]...)
		clear(seg.buf[s.r:end])
		next := seg.next
		s.recycle(seg)
		seg, s.r = next, 0
	}
	s.head, s.tail, s.r, s.w = nil, nil, 0, 0
	s.n.Store(0)
	return rest
}
