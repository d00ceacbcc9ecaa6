package queue

import "sync"

// A Waiter is a sender blocked until a queue has room: a Backpressure
// Enqueue on a full mailbox, or a Submit on a full pool. It waits in its
// queue's List; once out, Err holds its outcome (nil when Msg was accepted)
// and Answer signals it, the send ordering the write of Err before its
// read. The queue's owner guards Msg, Err and Links while it is listed.
type Waiter[T any] struct {
	Msg   T
	Err   error
	Links Links[Waiter[T]]
	ready chan struct{} // cap 1
}

// NewWaiter returns a Waiter ready to be listed.
func NewWaiter[T any]() *Waiter[T] {
	w := &Waiter[T]{ready: make(chan struct{}, 1)}
	w.Links.Init(w)
	return w
}

// Answer gives w its outcome. The sender may reuse w from then on.
func (w *Waiter[T]) Answer(err error) {
	w.Err = err
	w.ready <- struct{}{}
}

// Signal tells w that Err holds its outcome.
func (w *Waiter[T]) Signal() { w.ready <- struct{}{} }

// Ready is signalled once w has its outcome.
func (w *Waiter[T]) Ready() <-chan struct{} { return w.ready }

// Outcome receives w's outcome, waiting for it if need be, and clears it.
func (w *Waiter[T]) Outcome() error {
	<-w.ready
	return w.Received()
}

// Received returns the outcome of a w whose Ready was received, and clears
// it.
func (w *Waiter[T]) Received() error {
	err := w.Err
	w.Err = nil
	return err
}

// Waiters recycles Waiters through a sync.Pool, which the garbage
// collector empties when they go unused. The zero value is ready to use.
type Waiters[T any] struct{ pool sync.Pool }

// Get returns a recycled Waiter, or a new one.
func (p *Waiters[T]) Get() *Waiter[T] {
	if w := p.Take(); w != nil {
		return w
	}
	return NewWaiter[T]()
}

// Take returns a recycled Waiter, or nil if none is at hand: for a caller
// that must not allocate now, under a lock.
func (p *Waiters[T]) Take() *Waiter[T] {
	w, _ := p.pool.Get().(*Waiter[T])
	return w
}

// Put recycles w, whose outcome was received and whose Msg was cleared.
func (p *Waiters[T]) Put(w *Waiter[T]) { p.pool.Put(w) }
