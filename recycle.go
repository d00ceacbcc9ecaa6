package crew

import "sync"

// registry holds one process-wide value per type, keyed by a nil *X of that
// type (an interface holding a typed nil pointer is a distinct, comparable
// key per X). Generic code cannot declare a package-level variable per type
// parameter; this is the way to share recycled memory between all mailboxes
// of one element type. A sync.Pool per mailbox would instead pin per-P caches
// for every idle actor.
var registry sync.Map // map[any]any, each value a *X

// shared returns the process-wide zero-initialized *X, creating it on first
// use. Callers look it up once, at construction, and keep the pointer.
func shared[X any]() *X {
	key := any((*X)(nil))
	if v, ok := registry.Load(key); ok {
		return v.(*X)
	}
	v, _ := registry.LoadOrStore(key, new(X))
	return v.(*X)
}

// A freeList recycles *X values through a sync.Pool, which the garbage
// collector empties when they go unused.
type freeList[X any] struct{ pool sync.Pool }

// get returns a recycled *X, or a new zero one.
func (f *freeList[X]) get() *X {
	if x, ok := f.pool.Get().(*X); ok {
		return x
	}
	return new(X)
}

// put recycles x; the caller must have cleared what it should not retain.
func (f *freeList[X]) put(x *X) { f.pool.Put(x) }
