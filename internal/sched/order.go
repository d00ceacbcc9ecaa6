package sched

// An order holds runnable flows and picks the one whose job is dispatched
// next: the flow whose oldest job was queued first, so that across flows
// jobs are dispatched in the order they were queued (first come, first
// served). The scheduler has one for the flows of batches and keys (its
// own flow stays out of it: see Scheduler.first); with fair shares, each
// share has one, which orders the share's flows. It costs O(log flows) per
// change, O(1) for an order of one flow. The scheduler's lock guards it.
type order[T, B any] struct{ heap[*flow[T, B]] }

func newOrder[T, B any]() order[T, B] {
	return order[T, B]{heap[*flow[T, B]]{
		less: func(a, b *flow[T, B]) bool { return a.head() < b.head() },
		at:   func(f *flow[T, B]) *int { return &f.at },
	}}
}

// fix puts f where it belongs after its jobs or its running count changed:
// in the order if it is runnable, in its place by its head; out of it if
// not.
func (o *order[T, B]) fix(f *flow[T, B]) { o.heap.fix(f, f.runnable()) }

// A heap is the scheduler's one heap: a binary min-heap of pointers by
// less, each of which knows its place in it (at: 1 + its index, 0 while it
// is out of the heap), so that one whose key changed moves in O(log n). It
// orders flows by their oldest job, and shares by their virtual time.
// (The Priority mailbox's heap holds values, not pointers that know their
// place, and must survive a less that panics: it is a heap of its own.)
type heap[E comparable] struct {
	h    []E
	less func(a, b E) bool
	at   func(e E) *int
}

func (q *heap[E]) len() int { return len(q.h) }

// first returns the element that comes first, or the zero E if there is
// none.
func (q *heap[E]) first() E {
	if len(q.h) == 0 {
		var zero E
		return zero
	}
	return q.h[0]
}

// fix puts e where it belongs after its key changed: in the heap, in its
// place, if in; out of the heap if not.
func (q *heap[E]) fix(e E, in bool) {
	if n := len(q.h); n == 0 && !in || n == 1 && in && q.h[0] == e {
		return // nothing moves: the common case of one flow, or one share
	}
	at := q.at(e)
	switch was := *at > 0; {
	case in && was:
		if i := *at - 1; !q.up(i) {
			q.down(i)
		}
	case in:
		q.h = append(q.h, e)
		*at = len(q.h)
		q.up(len(q.h) - 1)
	case was:
		i, last := *at-1, len(q.h)-1
		q.swap(i, last)
		var zero E
		q.h[last], q.h = zero, q.h[:last]
		*at = 0
		if i < last && !q.up(i) {
			q.down(i)
		}
	}
}

func (q *heap[E]) swap(i, j int) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
	*q.at(q.h[i]), *q.at(q.h[j]) = i+1, j+1
}

// up moves the element at i towards the root while it comes before its
// parent, and reports whether it moved.
func (q *heap[E]) up(i int) bool {
	moved := false
	for i > 0 {
		parent := (i - 1) / 2
		if !q.less(q.h[i], q.h[parent]) {
			break
		}
		q.swap(i, parent)
		i, moved = parent, true
	}
	return moved
}

func (q *heap[E]) down(i int) {
	for n := len(q.h); ; {
		first := 2*i + 1
		if first >= n {
			return
		}
		if right := first + 1; right < n && q.less(q.h[right], q.h[first]) {
			first = right
		}
		if !q.less(q.h[first], q.h[i]) {
			return
		}
		q.swap(i, first)
		i = first
	}
}
