package crew

import (
	"context"
	"sync"
)

// routerKeys places a keyed router's messages (SpawnRouter with WithKey or
// WithConsistentHash) and releases their keys once handled.
type routerKeys[T any] struct {
	mu    sync.Mutex // guards keys
	keys  keyer[T]
	up    func(int) bool
	score func(int) int64
}

func newRouterKeys[T any](n int, o *options) *routerKeys[T] {
	rk := &routerKeys[T]{keys: keyerFor[T](o, n, "router", "messages")}
	// A message a routee drops (it stopped with the message queued, or was
	// told after it stopped) leaves its key too.
	sink := o.deadLetters
	if sink == nil {
		sink = logDeadLetter
	}
	o.deadLetters = func(d DeadLetter) {
		if msg, ok := d.Message.(T); ok {
			rk.release(msg)
		}
		sink(d)
	}
	return rk
}

// wrap makes handle release its message's key when it returns, panics or
// calls runtime.Goexit.
func (rk *routerKeys[T]) wrap(handle func(context.Context, T) error) func(context.Context, T) error {
	return func(ctx context.Context, msg T) error {
		defer rk.release(msg)
		return handle(ctx, msg)
	}
}

// bind gives the placement the routees' state, once they exist.
func (rk *routerKeys[T]) bind(refs []*Ref[T]) {
	rk.up = func(i int) bool { return !refs[i].stopped.Load() }
	rk.score = func(i int) int64 { return refs[i].load.Load() }
}

func (rk *routerKeys[T]) release(msg T) {
	rk.mu.Lock()
	rk.keys.release(msg)
	rk.mu.Unlock()
}

// tell places msg by its key and queues it, under the lock, so that a key's
// messages reach their routee in the order their Tells took it. The
// mailboxes are unbounded: Tell never blocks while it holds the lock.
func (rk *routerKeys[T]) tell(ctx context.Context, refs []*Ref[T], msg T) error {
	rk.mu.Lock()
	i := rk.keys.place(msg, len(refs), rk.up, rk.score)
	if i < 0 {
		rk.mu.Unlock()
		return ErrNoRoutee
	}
	err := refs[i].tell(ctx, msg)
	rk.mu.Unlock()
	if err != nil {
		refs[i].deadLetter(msg, err) // the sink releases the key
	}
	return err
}

// Keys reports how many keys a keyed router (SpawnRouter with WithKey) has
// bound to a routee now: those with messages queued or being handled. It
// is 0 for other routers.
func (r *Router[T]) Keys() int {
	if r.keyed == nil {
		return 0
	}
	return r.keyed.keys.active()
}
