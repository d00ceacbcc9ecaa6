package crew

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/crewlib/crew/internal/queue"
)

// segClosed marks a Segmented's ticket count once it is closed: an Enqueue
// whose ticket carries it was refused.
const segClosed = 1 << 63

// A Segmented is an unbounded FIFO mailbox on a linked list of segments,
// built for fan-in: many goroutines sending to one consumer. Its producers
// take no lock on the common path and never wait for one another: an
// Enqueue takes a ticket with one atomic increment, then writes its message
// into the ticket's slot. Unlike Unbounded it never copies queued messages
// to grow: a burst into an empty mailbox fills the free slots of a first
// segment of 32 messages (at least 17 of them: a drained first segment is
// moved back to its start once half of it is used), then links segments of
// 256, and each used segment goes back to a process-wide pool shared by
// every Segmented mailbox of the same element type, from which the next
// burst takes it. Steady traffic, bursty or not, therefore allocates
// nothing per message. Once a Dequeue has found it empty a mailbox holds at
// most its first segment, 32 slots, which it keeps for the next messages
// (so sparse traffic, an idle actor's, takes nothing from the pool) unless
// a backlog outgrew it: then it holds none, and its next Enqueue takes a
// first segment from the pool. The pooled segments are reused by other
// mailboxes or reclaimed by the garbage collector.
//
// The ticket is the Enqueue's linearization point: from then on Len counts
// the message, and messages come out in ticket order, so a message whose
// Enqueue returned before another's began comes out first. A Dequeue
// (consumers share a lock) takes the next ticket's message; if that
// Enqueue has taken its ticket but not yet written its slot, a matter of a
// few instructions unless its goroutine was descheduled between them, the
// Dequeue spins, then yields its processor, until the write, rather than
// report nothing while Len counts a message. Close waits for such writes
// too. Linking a segment, once per 256 messages of a backlog and for the
// first Enqueue into a mailbox that holds none, recycling one, and moving a
// drained first segment back to its start, once per 16 to 32 messages of
// sparse traffic (an Enqueue meanwhile takes that mutex too), take a mutex
// of their own.
//
// Enqueue never fails before Close and never waits for room. Enqueue and
// Dequeue are O(1). A Segmented is safe for concurrent use. The zero value
// is not usable: create one with NewSegmented.
type Segmented[T any] struct {
	segs *segmentPools[T] // shared by all Segmented[T]; set by NewSegmented

	// The consumers' side: deq, which holds the consumers' lock (see
	// lockHead), and what the lock guards.
	deq     atomic.Uint64              // tickets taken by consumers, times 2, plus 1 while the lock is held
	head    atomic.Pointer[segment[T]] // the segment of the next ticket, or the one before it; nil when the mailbox holds none; producers read it under linkMu
	enqSeen uint64                     // a past value of enq: consumers read enq, the producers' cache line, only once they have taken that many
	cur     *segment[T]                // head, as the consumers last found it: it holds the tickets from curBase to below curEnd
	curBase uint64
	curEnd  uint64

	_ [64]byte // keeps the producers' fields off the consumers' cache line

	// The producers' side.
	enq atomic.Uint64 // tickets given out, with segClosed once closed
	_   [56]byte      // keeps the tail, which producers only read, off enq's cache line

	tail   atomic.Pointer[segment[T]] // the newest segment, nil when the mailbox holds none
	linkMu sync.Mutex                 // guards linking, rebasing, releasing and recycling: no segment of the mailbox changes while it is held
}

// NewSegmented returns an empty Segmented mailbox. It takes its first segment
// on the first Enqueue.
func NewSegmented[T any]() *Segmented[T] {
	return &Segmented[T]{segs: queue.Shared[segmentPools[T]]()}
}

// Enqueue appends msg. It returns ErrMailboxClosed after Close and nil
// otherwise; it never waits for room, so ctx is ignored.
func (s *Segmented[T]) Enqueue(_ context.Context, msg T) error {
	// The tail, read before the ticket is taken, holds no later ticket
	// than it: a segment becomes the tail once a ticket in it is out.
	seg := s.tail.Load()
	k := s.enq.Add(1) - 1 // the ticket: msg is in the mailbox from here on
	if k&segClosed != 0 {
		return ErrMailboxClosed
	}
	i, ok := seg.slot(s, k)
	if !ok {
		seg, i = s.segmentOf(k, seg)
	}
	// The segment cannot be recycled or rebased before this slot is read:
	// consumers wait for it, and change only a segment whose tickets are
	// all taken.
	seg.buf[i] = msg
	atomic.StoreUint32(&seg.ready[i], 1)
	return nil
}

// segmentOf returns the segment that holds ticket k, and k's slot in it,
// for a producer holding k that did not find it at the tail it read before
// its ticket, from: the segment is not linked yet (this producer links it,
// and any before it that are missing), the tail has moved on (the segment
// is found from the tail the producer read, or from the head), or the
// mailbox holds no segment.
func (s *Segmented[T]) segmentOf(k uint64, from *segment[T]) (*segment[T], uint64) {
	s.linkMu.Lock()
	defer s.linkMu.Unlock()
	t := s.tail.Load()
	if t == nil { // the mailbox released its last segment: start again where the consumers are
		if s.segs == nil { // or it is a zero Segmented
			unmadeMailbox("Segmented", "NewSegmented")
		}
		t = s.fresh(true, s.deq.Load()>>1)
		s.head.Store(t)
		s.tail.Store(t)
	}
	for end := t.end(); end <= k; end = t.end() {
		next := s.fresh(false, end)
		t.next.Store(next)
		s.tail.Store(next)
		t = next
	}
	seg := t
	if k < t.base.Load() {
		// No ticket precedes the consumers, so k's segment is between the
		// head and the tail, and while linkMu is held none of them
		// changes. from, if it is still the mailbox's, is too, and nearer.
		seg = s.head.Load()
		if from != nil && from.owner.Load() == s && from.base.Load() <= k {
			seg = from
		}
		for k >= seg.end() {
			seg = seg.next.Load()
		}
	}
	return seg, k - seg.base.Load()
}

// fresh takes a segment from the pool, a first one or a linked one, as the
// mailbox's segment from ticket base.
func (s *Segmented[T]) fresh(first bool, base uint64) *segment[T] {
	seg := s.segs.get(first)
	seg.ver.Add(1)
	seg.owner.Store(s)
	seg.base.Store(base)
	seg.ver.Add(1)
	return seg
}

// recycle returns to the pool a segment whose slots are all cleared and
// that no consumer refers to any more; linkMu is held.
func (s *Segmented[T]) recycle(seg *segment[T]) {
	seg.ver.Add(1)
	s.retire(seg)
}

// retire is recycle for a segment whose ver is already odd.
func (s *Segmented[T]) retire(seg *segment[T]) {
	seg.owner.Store(nil)
	seg.base.Store(0)
	seg.next.Store(nil)
	// No producer writes to seg any more: every ticket in it is taken
	// (or, released, none is left out), and none can take it for its
	// segment while ver is odd. So its flags are cleared without atomics.
	clear(seg.ready)
	seg.ver.Add(1)
	s.segs.put(seg)
}

// Dequeue removes and returns the oldest message, or ok == false when the
// mailbox is empty or closed. It waits for nothing but the write of a
// message whose Enqueue has taken its ticket (see Segmented).
func (s *Segmented[T]) Dequeue() (msg T, ok bool) {
	d := s.lockHead()
	if d < s.curEnd && atomic.LoadUint32(&s.cur.ready[d-s.curBase]) != 0 {
		msg = s.cur.clear(d - s.curBase) // written, so its ticket is out: enq need not be read
	} else if msg, ok = s.dequeueSlow(d); !ok {
		s.unlockHead(d)
		return msg, false
	}
	s.unlockHead(d + 1)
	return msg, true
}

// lockHead takes the consumers' lock, which is deq's low bit, and returns
// the tickets taken. A consumer pays one atomic operation to take it and
// one to release it with the new count, where a mutex beside the count
// would take three. Consumers rarely contend: an actor has one. One that
// finds the lock held spins, then yields, as for an Enqueue's write.
func (s *Segmented[T]) lockHead() uint64 {
	for spins := 0; ; spins++ {
		if w := s.deq.Load(); w&1 == 0 && s.deq.CompareAndSwap(w, w|1) {
			return w >> 1
		}
		segmentBackoff(spins)
	}
}

// unlockHead releases the consumers' lock, with d tickets taken.
func (s *Segmented[T]) unlockHead(d uint64) { s.deq.Store(d << 1) }

// dequeueSlow is Dequeue when ticket d is not found written in the
// consumers' segment; the consumers' lock is held.
func (s *Segmented[T]) dequeueSlow(d uint64) (msg T, ok bool) {
	if d >= s.enqSeen { // as many taken as were seen out (Dequeue's fast path does not update enqSeen)
		e := s.enq.Load()
		if e&segClosed != 0 {
			return msg, false
		}
		if s.enqSeen = e; d == e {
			s.settle(d)
			return msg, false
		}
	}
	return s.take(d), true
}

// take reads and clears the slot of ticket d, which an Enqueue has taken;
// the consumers' lock is held.
func (s *Segmented[T]) take(d uint64) T {
	seg := s.headOf(d)
	i := d - s.curBase
	for spins := 0; atomic.LoadUint32(&seg.ready[i]) == 0; spins++ {
		if spins == 0 {
			if f := segmentWaits.Load(); f != nil {
				(*f)()
			}
		}
		segmentBackoff(spins) // its Enqueue is between the ticket and the write
	}
	return seg.clear(i)
}

// segmentWaits, if set (by tests), is called as a consumer starts to wait
// for the write of a message whose ticket is taken.
var segmentWaits atomic.Pointer[func()]

// segmentBackoff lets a consumer that waits for an Enqueue's write spin for
// about as long as a write on the slow path takes (a segment linked), then
// yield its processor on each try, in case the Enqueue's goroutine was
// descheduled, and needs it.
func segmentBackoff(spins int) {
	if spins >= 128 {
		runtime.Gosched()
	}
}

// headOf returns the segment that holds ticket d, where the consumers
// read, moving the head on and recycling the segments it leaves; the
// consumers' lock is held, and some Enqueue holds ticket d, which that
// Enqueue or another links.
func (s *Segmented[T]) headOf(d uint64) *segment[T] {
	for spins := 0; ; spins++ {
		h := s.head.Load()
		switch {
		case h == nil: // none held: the Enqueue is starting one
		case d < h.end(): // only consumers move a held segment's base, and never past d
			s.cur, s.curBase, s.curEnd = h, h.base.Load(), h.end()
			return h
		default: // used up
			if next := h.next.Load(); next != nil {
				s.head.Store(next)
				s.cur, s.curBase, s.curEnd = nil, 0, 0
				s.linkMu.Lock()
				s.recycle(h)
				s.linkMu.Unlock()
				spins = 0
				continue
			}
		}
		segmentBackoff(spins) // the Enqueue that links it is at work
	}
}

// settle readies a drained mailbox, every ticket given out, d of them,
// taken, for the next messages; the consumers' lock is held. It keeps a
// first segment, so sparse traffic takes nothing from the pool, and once
// half of it is used rebases it to start at ticket d, so its 32 slots are
// used again. Any other segment goes back to the pool, so an idle mailbox
// holds no more than a first segment.
func (s *Segmented[T]) settle(d uint64) {
	h := s.head.Load()
	if h == nil || h.first() && d-h.base.Load() < firstSlots/2 {
		return
	}
	s.linkMu.Lock()
	defer s.linkMu.Unlock()
	if h != s.tail.Load() {
		return // a later segment is linked: more tickets are out
	}
	// An odd ver stops producers from taking h as their segment; one that
	// took a ticket since the check above, or checked h before, has raised
	// enq, so h stays as it is.
	h.ver.Add(1)
	if s.enq.Load() != d {
		h.ver.Add(1)
		return
	}
	if h.first() {
		// Every ticket of h up to d is taken: its used flags are the
		// first d-base, and no producer writes to it while ver is odd.
		clear(h.ready[:d-h.base.Load()])
		h.base.Store(d)
		h.ver.Add(1)
		s.cur, s.curBase, s.curEnd = h, d, d+firstSlots
		return
	}
	s.holdNone()
	s.retire(h)
}

// holdNone leaves the mailbox holding no segment, once the caller has
// taken them all out; linkMu and the consumers' lock are held.
func (s *Segmented[T]) holdNone() {
	s.head.Store(nil)
	s.tail.Store(nil)
	s.cur, s.curBase, s.curEnd = nil, 0, 0
}

// Len reports the number of queued messages: the exact count at one
// instant during the call, messages whose Enqueue has taken its ticket
// included. The one exception is a storm of Enqueues that changes the
// count under each of Len's 32 tries: Len then returns a count that may
// leave out messages enqueued during the call, and is never above the count
// at some instant during it.
func (s *Segmented[T]) Len() int { return countUntil(&s.enq, &s.deq, 1, segClosed) }

// Cap reports how many message slots the mailbox holds now: 32 for a first
// segment and 256 for each linked behind it; once a Dequeue has found it
// empty, 32 or 0.
func (s *Segmented[T]) Cap() int {
	s.linkMu.Lock() // no segment is recycled meanwhile
	defer s.linkMu.Unlock()
	slots := 0
	for seg := s.head.Load(); seg != nil; seg = seg.next.Load() {
		slots += len(seg.buf)
	}
	return slots
}

// Close disposes of the mailbox and returns the queued messages, oldest
// first; it waits for the writes of those whose Enqueue has taken its
// ticket. Later calls return nil.
func (s *Segmented[T]) Close() []T {
	d := s.lockHead()
	e := s.enq.Or(segClosed) // from here on every Enqueue is refused
	if e&segClosed != 0 {
		s.unlockHead(d)
		return nil
	}
	var rest []T
	if e > d {
		rest = make([]T, 0, e-d)
	}
	for ; d < e; d++ {
		rest = append(rest, s.take(d))
	}
	s.linkMu.Lock()
	for seg := s.head.Load(); seg != nil; {
		next := seg.next.Load()
		s.recycle(seg)
		seg = next
	}
	s.holdNone()
	s.linkMu.Unlock()
	s.enqSeen = e
	s.unlockHead(e)
	return rest
}
