package crew

import "github.com/crewlib/crew/internal/queue"

// A prioItem is a queued message with its arrival number.
type prioItem[T any] struct {
	msg T
	seq uint64
}

// prioHeap is the binary heap of items under a Priority mailbox, ordered
// by less (then by seq among equals, if stable). Its array comes from bufs
// and goes back to it. Its owner guards it.
type prioHeap[T any] struct {
	h      []prioItem[T]
	box    *queue.Slab[prioItem[T]] // holds h's array if it came from bufs
	bufs   *queue.Slabs[prioItem[T]]
	less   func(a, b T) bool
	stable bool
}

func (q *prioHeap[T]) len() int { return len(q.h) }

// push adds it. It finds its place before it moves anything, so that a
// less that panics leaves the heap as it was.
func (q *prioHeap[T]) push(it prioItem[T]) {
	i := len(q.h)
	for i > 0 {
		parent := (i - 1) / 2
		if !q.precedes(&it, &q.h[parent]) {
			break
		}
		i = parent
	}
	q.add(it)
	// Move the ancestors between the new leaf and i one level down.
	for j := len(q.h) - 1; j != i; {
		parent := (j - 1) / 2
		q.h[j] = q.h[parent]
		j = parent
	}
	q.h[i] = it
}

// add appends it, out of order: push puts it in its place.
func (q *prioHeap[T]) add(it prioItem[T]) {
	if len(q.h) == cap(q.h) {
		q.grow()
	}
	q.h = append(q.h, it)
}

// pop removes and returns the first item, or ok == false if there is none.
// A heap it drains gives back an array larger than queue.KeptRingSlots.
func (q *prioHeap[T]) pop() (it prioItem[T], ok bool) {
	last := len(q.h) - 1
	if last < 0 {
		return it, false
	}
	it = q.h[0]
	q.h[0] = q.h[last]
	q.h[last] = prioItem[T]{}
	q.h = q.h[:last]
	q.down(0)
	if last == 0 && cap(q.h) > queue.KeptRingSlots {
		q.release()
	}
	return it, true
}

// grow doubles the heap's array, taking the new one from bufs and giving
// the old one back.
func (q *prioHeap[T]) grow() {
	buf, box := q.bufs.Take(max(2*cap(q.h), queue.MinRingSlots))
	n := copy(buf, q.h)
	clear(q.h)
	q.release()
	q.h, q.box = buf[:n], box
}

// release gives the heap's array, every slot of which is zero, back to
// bufs.
func (q *prioHeap[T]) release() {
	q.bufs.Give(q.box)
	q.h, q.box = nil, nil
}

// before reports whether the item at i must come out before the one at j.
func (q *prioHeap[T]) before(i, j int) bool { return q.precedes(&q.h[i], &q.h[j]) }

// precedes reports whether a must come out before b.
func (q *prioHeap[T]) precedes(a, b *prioItem[T]) bool {
	if q.less(a.msg, b.msg) {
		return true
	}
	if !q.stable || q.less(b.msg, a.msg) {
		return false
	}
	return a.seq < b.seq
}

func (q *prioHeap[T]) down(i int) {
	n := len(q.h)
	for {
		first := 2*i + 1
		if first >= n {
			return
		}
		if right := first + 1; right < n && q.before(right, first) {
			first = right
		}
		if !q.before(first, i) {
			return
		}
		q.h[i], q.h[first] = q.h[first], q.h[i]
		i = first
	}
}
