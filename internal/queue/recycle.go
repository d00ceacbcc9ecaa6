package queue

import (
	"math/bits"
	"sync"
)

// registry holds one process-wide value per type, keyed by a nil *X of that
// type (an interface holding a typed nil pointer is a distinct, comparable
// key per X). Generic code cannot declare a package-level variable per type
// parameter; this is the way to share recycled memory between all queues
// of one element type. A sync.Pool per queue would instead pin per-P caches
// for every idle actor.
var registry sync.Map // map[any]any, each value a *X

// Shared returns the process-wide zero-initialized *X, creating it on first
// use. Callers look it up once, at construction, and keep the pointer.
func Shared[X any]() *X {
	key := any((*X)(nil))
	if v, ok := registry.Load(key); ok {
		return v.(*X)
	}
	v, _ := registry.LoadOrStore(key, new(X))
	return v.(*X)
}

// A FreeList recycles *X values through a sync.Pool, which the garbage
// collector empties when they go unused. The zero value is ready to use.
type FreeList[X any] struct{ pool sync.Pool }

// Get returns a recycled *X, or a new zero one.
func (f *FreeList[X]) Get() *X {
	if x, ok := f.pool.Get().(*X); ok {
		return x
	}
	return new(X)
}

// Recycled returns a recycled *X, or nil when none is free: for an X that
// its zero value does not make ready.
func (f *FreeList[X]) Recycled() *X {
	x, _ := f.pool.Get().(*X)
	return x
}

// Put recycles x; the caller must have cleared what it should not retain.
func (f *FreeList[X]) Put(x *X) { f.pool.Put(x) }

// A Slab boxes a recycled buffer: the pool stores the pointer, where a
// slice put in an interface would allocate on every Put.
type Slab[T any] struct{ s []T }

// Slabs recycles the buffers of growable queues (a Ring, a heap), one free
// list per power-of-two size from MinRingSlots to 1<<20 slots. A queue
// hands it each buffer it outgrows, and the one it releases when it
// drains, rather than dropping them for the garbage collector, so the next
// burst regrows without allocating or zeroing memory; what stays unused in
// the pool the collector reclaims. The zero value is ready to use.
type Slabs[T any] struct {
	class [slabClasses]FreeList[Slab[T]]
}

const (
	minSlabShift = 3  // MinRingSlots
	maxSlabShift = 20 // 1<<20 slots; larger buffers are not recycled
	slabClasses  = maxSlabShift - minSlabShift + 1
)

// slabClass returns the free list index for a buffer of size slots.
func slabClass(size int) (int, bool) {
	if size < 1<<minSlabShift || size > 1<<maxSlabShift || size&(size-1) != 0 {
		return 0, false
	}
	return bits.Len(uint(size)) - 1 - minSlabShift, true
}

// Take returns a zeroed buffer of size slots and, if it is recyclable, the
// box to give back later. A nil p recycles nothing.
func (p *Slabs[T]) Take(size int) ([]T, *Slab[T]) {
	c, ok := slabClass(size)
	if p == nil || !ok {
		return make([]T, size), nil
	}
	box := p.class[c].Get()
	if box.s == nil {
		box.s = make([]T, size)
	}
	return box.s, box
}

// Give recycles a box from Take whose slots are all zero; a nil box, from
// a Take that recycled nothing, is ignored.
func (p *Slabs[T]) Give(box *Slab[T]) {
	if box == nil {
		return
	}
	c, _ := slabClass(len(box.s))
	p.class[c].Put(box)
}
