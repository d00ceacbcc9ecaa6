package crew

import (
	"sync/atomic"

	"github.com/crewlib/crew/internal/queue"
)

// The segments a Segmented links, their two sizes, and the pool that
// recycles them across the mailboxes of one element type.

// Segment sizes. A mailbox's first segment holds firstSlots messages; a
// drained mailbox keeps it, and rebases it once half of it is used, so a
// burst into an empty mailbox finds at least firstSlots/2+1 of its slots
// free. Each segment linked behind it, during a backlog, holds
// segmentSlots.
const (
	firstSlots   = 32
	segmentSlots = 256
)

// A segment is one block of a Segmented mailbox's linked list: it holds
// tickets base to base+len(buf)-1, ticket k in slot k-base. A producer
// writes its slot, then sets the slot's ready flag; the consumer reads a
// slot only once it is ready, and clears the slot. The flags stay set until
// the segment is recycled or rebased: the consumer writes none of them
// while producers set the next ones, so they do not fetch their cache line
// back from it. Its slots live right behind it, in a firstBlock or a
// linkedBlock.
type segment[T any] struct {
	buf   []T      // set once, as the block is made
	ready []uint32 // 1 once written; read and set atomically, cleared as a whole when no producer can reach the slots

	// Which mailbox's segment this is, and where: producers read these
	// without a lock to check the segment they found, as a seqlock: ver is
	// odd while owner and base change (as the segment is recycled or
	// rebased) and while the consumer decides whether to release it.
	ver   atomic.Uint64
	owner atomic.Pointer[Segmented[T]]
	base  atomic.Uint64
	next  atomic.Pointer[segment[T]] // set once, by the producer that links the next segment
}

// firstBlock and linkedBlock hold a segment and its slots in one
// allocation. A linked block's padding keeps the header, which producers
// read, off the first slots' cache line; a first block, which a drained
// mailbox keeps, saves the space (a first block of ints takes 464 bytes),
// at the cost of producers writing its first slots invalidating the line
// they read base from.
type (
	firstBlock[T any] struct {
		seg   segment[T]
		buf   [firstSlots]T
		ready [firstSlots]uint32
	}
	linkedBlock[T any] struct {
		seg   segment[T]
		_     [64]byte
		buf   [segmentSlots]T
		ready [segmentSlots]uint32
	}
)

// end returns the ticket after seg's last.
func (seg *segment[T]) end() uint64 { return seg.base.Load() + uint64(len(seg.buf)) }

// first reports whether seg is a first segment.
func (seg *segment[T]) first() bool { return len(seg.buf) == firstSlots }

// segmentPools recycles the segments of every Segmented[T], a free list per
// size.
type segmentPools[T any] struct {
	first, linked queue.FreeList[segment[T]]
}

// list returns the free list of first segments or of linked ones.
func (p *segmentPools[T]) list(first bool) *queue.FreeList[segment[T]] {
	if first {
		return &p.first
	}
	return &p.linked
}

// get returns a zero segment, first or linked, recycled if one is free.
func (p *segmentPools[T]) get(first bool) *segment[T] {
	if seg := p.list(first).Recycled(); seg != nil {
		return seg
	}
	if first {
		b := new(firstBlock[T])
		b.seg.buf, b.seg.ready = b.buf[:], b.ready[:]
		return &b.seg
	}
	b := new(linkedBlock[T])
	b.seg.buf, b.seg.ready = b.buf[:], b.ready[:]
	return &b.seg
}

// put recycles seg, cleared; its pointer keeps its whole block alive.
func (p *segmentPools[T]) put(seg *segment[T]) { p.list(seg.first()).Put(seg) }

// slot returns the slot of ticket k in seg, and whether seg is the
// mailbox's segment that holds it, read consistently while seg may be
// recycled or rebased meanwhile. A nil seg holds nothing.
func (seg *segment[T]) slot(s *Segmented[T], k uint64) (uint64, bool) {
	if seg == nil {
		return 0, false
	}
	v := seg.ver.Load()
	i := k - seg.base.Load() // wraps around, so out of range, for a k below base
	ok := v%2 == 0 && seg.owner.Load() == s && i < uint64(len(seg.buf))
	return i, ok && seg.ver.Load() == v
}

// clear reads and clears written slot i.
func (seg *segment[T]) clear(i uint64) T {
	var zero T
	msg := seg.buf[i]
	seg.buf[i] = zero // ready stays set until the segment is recycled or rebased: a write producers need not fetch back
	return msg
}
