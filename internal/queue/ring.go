package queue

// A Ring is a growable FIFO circular buffer, whose buffer's size is a
// power of two. Its buffers come from a Slabs and go back to it, if it has
// one (RingOf). The zero value is an empty ring that holds no buffer and
// recycles none.
type Ring[T any] struct {
	buf  []T
	head int // index of the oldest element
	n    int // number of elements

	bufs *Slabs[T] // if set, buffers come from it and go back to it
	box  *Slab[T]  // holds buf if it came from bufs
}

// MinRingSlots is the first buffer a Ring allocates.
const MinRingSlots = 8

// KeptRingSlots is the largest buffer a drained Ring keeps: above it, the
// Pop that drains the ring gives the buffer back to its Slabs, or to the
// garbage collector, so that steady traffic that stays shallow allocates
// nothing and a burst's buffer does not outlive the burst.
const KeptRingSlots = 64

// RingOf returns an empty ring whose buffers come from bufs.
func RingOf[T any](bufs *Slabs[T]) Ring[T] { return Ring[T]{bufs: bufs} }

// Len reports the elements in the ring.
func (r *Ring[T]) Len() int { return r.n }

// Size reports the slots of the ring's buffer.
func (r *Ring[T]) Size() int { return len(r.buf) }

// Push appends v, doubling the buffer first when it is full.
func (r *Ring[T]) Push(v T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v // a buffer's size is a power of two
	r.n++
}

// grow doubles the buffer (or allocates the first one), unwrapping the
// elements to the front of the new buffer.
func (r *Ring[T]) grow() {
	buf, box := r.bufs.Take(max(2*len(r.buf), MinRingSlots))
	if r.n > 0 {
		if end := r.head + r.n; end <= len(r.buf) {
			copy(buf, r.buf[r.head:end])
		} else {
			k := copy(buf, r.buf[r.head:])
			copy(buf[k:], r.buf[:end-len(r.buf)])
		}
	}
	if r.box != nil {
		clear(r.buf)
		r.bufs.Give(r.box)
	}
	r.buf, r.head, r.box = buf, 0, box
}

// Pop removes and returns the oldest element, or ok == false if there is
// none. It clears the slot, so that the ring does not keep the element
// reachable for the garbage collector. A Pop that drains the ring gives
// back its buffer if it is larger than KeptRingSlots.
func (r *Ring[T]) Pop() (v T, ok bool) {
	if r.n == 0 {
		return v, false
	}
	p := &r.buf[r.head]
	v, *p = *p, v
	r.head = (r.head + 1) & (len(r.buf) - 1)
	if r.n--; r.n == 0 && len(r.buf) > KeptRingSlots {
		r.Release()
	}
	return v, true
}

// Front returns the oldest element, which the ring must have, in place.
func (r *Ring[T]) Front() *T { return &r.buf[r.head] }

// Trim gives back the buffer of an empty ring that grew past its first
// size, MinRingSlots: for a ring handed on to a new owner (the next key
// given a slot), which keeps a small buffer and no burst's.
func (r *Ring[T]) Trim() {
	if len(r.buf) > MinRingSlots {
		r.Release()
	}
}

// Release drops the buffer of an empty ring, giving it back to its Slabs
// if it came from there (Pop left every slot zero).
func (r *Ring[T]) Release() {
	r.bufs.Give(r.box)
	r.buf, r.head, r.box = nil, 0, nil
}
