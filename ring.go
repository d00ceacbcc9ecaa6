package crew

// ring is the growable FIFO circular buffer under each of Fair's sub-queues
// and its serving order, a pool's backlog and its keys' queues. It is not
// safe for concurrent use: its owner guards it. The zero value is an empty
// ring that holds no buffer.
type ring[T any] struct {
	buf  []T
	head int // index of the oldest element
	n    int // number of elements

	bufs *slabs[T] // if set, buffers come from it and go back to it
	box  *slab[T]  // holds buf if it came from bufs
}

// minRingSlots is the first buffer a growable ring allocates.
const minRingSlots = 8

// keptRingSlots is the largest buffer a drained growable ring keeps: above it,
// the buffer goes back to the garbage collector when the ring empties.
const keptRingSlots = 64

// push appends v, doubling the buffer first when it is full.
func (r *ring[T]) push(v T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	i := r.head + r.n
	if i >= len(r.buf) {
		i -= len(r.buf)
	}
	r.buf[i] = v
	r.n++
}

// grow doubles the buffer (or allocates the first one), unwrapping the
// elements to the front of the new buffer.
func (r *ring[T]) grow() {
	size := 2 * len(r.buf)
	if size < minRingSlots {
		size = minRingSlots
	}
	buf, box := r.bufs.take(size)
	r.copyTo(buf)
	if r.box != nil {
		clear(r.buf)
		r.bufs.give(r.box)
	}
	r.buf, r.head, r.box = buf, 0, box
}

// copyTo copies the elements, oldest first, to dst, which has room for r.n.
func (r *ring[T]) copyTo(dst []T) {
	if r.n == 0 {
		return
	}
	end := r.head + r.n
	if end <= len(r.buf) {
		copy(dst, r.buf[r.head:end])
		return
	}
	k := copy(dst, r.buf[r.head:])
	copy(dst[k:], r.buf[:end-len(r.buf)])
}

// pop removes and returns the oldest element. It clears the slot so the ring
// does not keep the element reachable for the garbage collector.
func (r *ring[T]) pop() (T, bool) {
	var zero T
	if r.n == 0 {
		return zero, false
	}
	v := r.buf[r.head]
	r.buf[r.head] = zero
	r.head++
	if r.head == len(r.buf) {
		r.head = 0
	}
	r.n--
	return v, true
}

// shrinkIfDrained releases a growable ring's buffer once the ring is empty,
// if the buffer is larger than keptRingSlots. A buffer at or below that size
// is kept, so steady traffic that stays shallow allocates nothing.
func (r *ring[T]) shrinkIfDrained() {
	if r.n == 0 {
		r.head = 0
		if len(r.buf) > keptRingSlots {
			r.release()
		}
	}
}

// release drops the buffer of an empty ring, giving it back to bufs if it
// came from there (pop left every slot zero).
func (r *ring[T]) release() {
	r.bufs.give(r.box)
	r.buf, r.head, r.box = nil, 0, nil
}
