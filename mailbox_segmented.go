package crew

import (
	"context"
	"sync"
	"sync/atomic"
)

// segmentSlots is the number of messages one Segmented segment holds.
const segmentSlots = 256

// A segment is one fixed block of a Segmented mailbox's linked list.
// Producers fill buf in order, and link the next segment before they write
// into it; a slot is published by the mailbox's count of messages in
// (enq), which consumers read before they read the slot, so a slot is
// never read while written.
type segment[T any] struct {
	buf  [segmentSlots]T
	next atomic.Pointer[segment[T]] // set once this segment is full
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
// Producers and consumers take different locks: Enqueue writes at the tail
// under one mutex, Dequeue reads at the head under another, and the two meet
// only through an atomic count of the messages in, which a consumer reads
// only once it has taken as many as it last saw. A producer therefore
// never waits for a consumer, or the reverse, except when the mailbox is
// empty. Enqueue and Dequeue are O(1): one mutex and one atomic operation
// each, plus a pool Get or Put once per 256 messages or when the mailbox
// drains. Use it for deep or bursty queues and large messages, which
// Unbounded copies when it grows, and for fan-in as much as Unbounded
// (see the package's "Choosing a mailbox": its producers share one lock).
//
// Enqueue never blocks and never fails before Close. A Segmented is safe for
// concurrent use. The zero value is not usable: create one with NewSegmented.
type Segmented[T any] struct {
	segs *freeList[segment[T]] // shared by all Segmented[T]; set by NewSegmented

	// The consumers' side.
	headMu  sync.Mutex  // guards head, r and enqSeen
	head    *segment[T] // oldest segment; nil when the mailbox holds none
	r       int         // next slot to read in head
	enqSeen uint64      // a past value of enq: consumers read enq, the producers' cache line, only once they have taken that many
	deq     atomic.Uint64

	_ [64]byte // keeps the producers' fields off the consumers' cache line

	// The producers' side. Lock order: tailMu before headMu.
	tailMu sync.Mutex  // guards tail, w and closed
	tail   *segment[T] // newest segment; nil when the mailbox holds none
	w      int         // slots written in tail
	closed bool
	enq    atomic.Uint64 // messages in: each is published by raising it
}

// NewSegmented returns an empty Segmented mailbox. It takes its first segment
// on the first Enqueue.
func NewSegmented[T any]() *Segmented[T] {
	return &Segmented[T]{segs: shared[freeList[segment[T]]]()}
}

// Enqueue appends msg. It returns ErrMailboxClosed after Close and nil
// otherwise; it never blocks, so ctx is ignored.
func (s *Segmented[T]) Enqueue(_ context.Context, msg T) error {
	s.tailMu.Lock()
	if s.closed {
		s.tailMu.Unlock()
		return ErrMailboxClosed
	}
	t := s.tail
	switch {
	case t == nil: // the mailbox holds no segment: start one for both sides
		t = s.segs.get()
		s.headMu.Lock()
		s.head, s.r = t, 0
		s.headMu.Unlock()
		s.tail, s.w = t, 0
	case s.w == segmentSlots:
		next := s.segs.get()
		t.next.Store(next) // from here on only consumers touch t
		s.tail, s.w, t = next, 0, next
	}
	t.buf[s.w] = msg
	s.w++
	// Counting publishes: the count is the instant the message is in the
	// mailbox. Dequeue takes only messages counted in, so it never finds
	// nothing while Len counts one, and Len never goes negative.
	s.enq.Add(1)
	s.tailMu.Unlock()
	return nil
}

// Dequeue removes and returns the oldest message, or ok == false when the
// mailbox is empty or closed.
func (s *Segmented[T]) Dequeue() (msg T, ok bool) {
	s.headMu.Lock()
	defer s.headMu.Unlock()
	h := s.head
	if h == nil {
		return msg, false
	}
	d := s.deq.Load()
	if d == s.enqSeen {
		if s.enqSeen = s.enq.Load(); d == s.enqSeen { // none counted in: one being published is not in yet
			if h.next.Load() == nil {
				s.releaseIfDrained(h) // in case the Dequeue that drained it could not
			}
			return msg, false
		}
	}
	// A message counted in is published, and so is the segment it is in.
	if s.r == segmentSlots { // used up: move on to the next
		next := h.next.Load()
		s.head, s.r = next, 0
		s.recycle(h)
		h = next
	}
	var zero T
	msg, h.buf[s.r] = h.buf[s.r], zero
	s.r++
	s.deq.Store(d + 1)
	if d+1 == s.enqSeen && h.next.Load() == nil && d+1 == s.enq.Load() {
		s.releaseIfDrained(h) // it looks drained
	}
	return msg, true
}

// releaseIfDrained hands the last segment back to the pool once everything
// published in it has been read, so an idle mailbox holds no memory. It needs
// the producers' lock too; it only tries it, since headMu is held and
// producers take the locks in the other order. If a producer holds it, the
// mailbox is not staying empty and a later Dequeue will try again.
func (s *Segmented[T]) releaseIfDrained(h *segment[T]) {
	if !s.tailMu.TryLock() {
		return
	}
	if s.tail == h && s.r == s.w {
		s.head, s.tail, s.r = nil, nil, 0
		s.recycle(h)
	}
	s.tailMu.Unlock()
}

// recycle returns a segment whose slots are all cleared to the pool. No
// producer or consumer refers to it any more.
func (s *Segmented[T]) recycle(seg *segment[T]) {
	seg.next.Store(nil)
	s.segs.put(seg)
}

// counters gives a Ref the positions Len subtracts (see counted).
func (s *Segmented[T]) counters() (in, out *atomic.Uint64) { return &s.enq, &s.deq }

// Len reports the number of queued messages: the exact count at one
// instant during the call. The one exception is a storm of Enqueues that
// changes the count under each of Len's 32 tries: Len then returns a count
// that may leave out messages enqueued during the call, and is never above
// the count at some instant during it.
func (s *Segmented[T]) Len() int { return countBetween(&s.enq, &s.deq) }

// Cap reports how many message slots the mailbox holds now: 256 per linked
// segment, and 0 once it has drained.
func (s *Segmented[T]) Cap() int {
	// Only headMu: holding tailMu too would make a draining Dequeue's
	// TryLock fail, and the mailbox keep its last segment.
	s.headMu.Lock()
	defer s.headMu.Unlock()
	slots := 0
	for seg := s.head; seg != nil; seg = seg.next.Load() {
		slots += segmentSlots
	}
	return slots
}

// Close disposes of the mailbox and returns the queued messages, oldest
// first. Later calls return nil.
func (s *Segmented[T]) Close() []T {
	s.tailMu.Lock()
	defer s.tailMu.Unlock()
	s.headMu.Lock()
	defer s.headMu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var rest []T
	if n := int(s.enq.Load() - s.deq.Load()); n > 0 {
		rest = make([]T, 0, n)
	}
	for seg := s.head; seg != nil; {
		w := segmentSlots
		if seg == s.tail {
			w = s.w
		}
		rest = append(rest, seg.buf[s.r:w]...)
		clear(seg.buf[s.r:w])
		next := seg.next.Load()
		s.recycle(seg)
		seg, s.r = next, 0
	}
	s.head, s.tail = nil, nil
	s.deq.Store(s.enq.Load())
	return rest
}
