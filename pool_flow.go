package crew

// A flow is a queue of jobs that a pool dispatches as one: the pool's own
// jobs, a batch's, or a key's (WithKey). Within a flow, jobs are
// dispatched in the order they were queued; a flow with limit > 0 runs at
// most limit of its jobs at once, and is not runnable while it does. Which
// runnable flow's job runs next is the order's choice. The dispatcher's
// lock guards a flow.
type flow[T any] struct {
	q       ring[prioItem[T]] // jobs waiting, oldest first, each with its number (seq)
	mb      Mailbox[T]        // the pool's backlog of its own (WithMailbox), instead of q
	evicted []T               // jobs mb evicted (DropOldest), waiting for their dead letters
	running int               // jobs dispatched and not ended
	limit   int               // the most jobs running at once, or 0
	at      int               // 1 + the flow's index in the order, or 0 while it is not there
	batch   *Batch[T]         // the batch whose jobs these are, or nil
	routee  int               // a keyed router's: the routee its jobs running are at
}

// queued reports the jobs waiting to be dispatched.
func (f *flow[T]) queued() int {
	if f.mb != nil {
		return f.mb.Len()
	}
	return f.q.n
}

// free reports whether a job of the flow may be dispatched now: it is
// under its limit.
func (f *flow[T]) free() bool { return f.limit == 0 || f.running < f.limit }

// runnable reports whether the flow has a job that may be dispatched now.
func (f *flow[T]) runnable() bool { return f.free() && f.queued() > 0 }

// push queues job, numbered seq.
func (f *flow[T]) push(job T, seq uint64) { f.q.push(prioItem[T]{msg: job, seq: seq}) }

// pop removes the oldest job; the flow has one. A ring it drains gives back
// a buffer larger than keptRingSlots.
func (f *flow[T]) pop() T {
	if f.mb != nil {
		job, _ := f.mb.Dequeue()
		return job
	}
	e, _ := f.q.pop()
	if f.q.n == 0 && len(f.q.buf) > keptRingSlots {
		f.q.release()
	}
	return e.msg
}

// front returns the oldest job without removing it; the flow has one (and
// no mailbox).
func (f *flow[T]) front() T { return f.q.buf[f.q.head].msg }

// head reports the number of the flow's oldest job: what the order sorts
// flows by. A mailbox orders its own jobs, and is the only flow of its pool.
func (f *flow[T]) head() uint64 {
	if f.mb != nil {
		return 0
	}
	return f.q.buf[f.q.head].seq
}

// An order holds the runnable flows and picks the one whose job is
// dispatched next: the flow whose oldest job was queued first, so that
// across flows jobs are dispatched in submission order (first come, first
// served). It is a binary heap of flows by head, each flow knowing its
// place (flow.at): O(log flows) per change, O(1) for a pool of one flow.
// The dispatcher's lock guards it.
type order[T any] struct {
	h   []*flow[T]
	seq uint64 // the number of the last job queued
}

// number numbers a job queued now: later jobs have higher numbers.
func (o *order[T]) number() uint64 {
	o.seq++
	return o.seq
}

// first returns the flow whose job is dispatched next, or nil if none is
// runnable.
func (o *order[T]) first() *flow[T] {
	if len(o.h) == 0 {
		return nil
	}
	return o.h[0]
}

// fix puts f where it belongs after its jobs or its running count changed:
// in the order if it is runnable, in its place by its head; out of it if
// not.
func (o *order[T]) fix(f *flow[T]) {
	switch in := f.at > 0; {
	case f.runnable() && in:
		if i := f.at - 1; !o.up(i) {
			o.down(i)
		}
	case f.runnable():
		o.h = append(o.h, f)
		f.at = len(o.h)
		o.up(len(o.h) - 1)
	case in:
		i, last := f.at-1, len(o.h)-1
		o.swap(i, last)
		o.h[last], o.h = nil, o.h[:last]
		f.at = 0
		if i < last && !o.up(i) {
			o.down(i)
		}
	}
}

func (o *order[T]) swap(i, j int) {
	o.h[i], o.h[j] = o.h[j], o.h[i]
	o.h[i].at, o.h[j].at = i+1, j+1
}

// up moves the flow at i towards the root while it comes before its
// parent, and reports whether it moved.
func (o *order[T]) up(i int) bool {
	moved := false
	for i > 0 {
		parent := (i - 1) / 2
		if o.h[parent].head() <= o.h[i].head() {
			break
		}
		o.swap(i, parent)
		i, moved = parent, true
	}
	return moved
}

func (o *order[T]) down(i int) {
	for n := len(o.h); ; {
		first := 2*i + 1
		if first >= n {
			return
		}
		if right := first + 1; right < n && o.h[right].head() < o.h[first].head() {
			first = right
		}
		if o.h[i].head() <= o.h[first].head() {
			return
		}
		o.swap(i, first)
		i = first
	}
}
