package crew

// A waiter is a sender blocked until a queue has room: a Backpressure
// Enqueue on a full Bounded, or a Submit on a full pool. Once it has left
// its list, err holds its outcome (nil when msg was accepted) and ready is
// signalled; the send orders the write of err before its read.
type waiter[T any] struct {
	msg        T
	prev, next *waiter[T]
	queued     bool // in its list; the list's owner guards it and the links
	err        error
	ready      chan struct{} // cap 1
}

// answer gives w its outcome. The sender may reuse w from then on.
func (w *waiter[T]) answer(err error) {
	w.err = err
	w.ready <- struct{}{}
}

// outcome receives w's outcome, waiting for it if need be.
func (w *waiter[T]) outcome() error {
	<-w.ready
	err := w.err
	w.err = nil
	return err
}

// A waitList is a FIFO of waiters, linked through them. Its owner guards
// it.
type waitList[T any] struct{ first, last *waiter[T] }

// push queues w last.
func (l *waitList[T]) push(w *waiter[T]) {
	w.prev, w.next, w.queued = l.last, nil, true
	if l.last == nil {
		l.first = w
	} else {
		l.last.next = w
	}
	l.last = w
}

// remove takes w, which is queued, off the list.
func (l *waitList[T]) remove(w *waiter[T]) {
	if w.prev == nil {
		l.first = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		l.last = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
}

// detach takes every waiter off the list and returns them, linked through
// next, oldest first, to be answered once the owner's lock is released:
// each is no longer queued, so that a remove cannot touch the chain.
func (l *waitList[T]) detach() *waiter[T] {
	first := l.first
	for w := first; w != nil; w = w.next {
		w.queued = false
	}
	l.first, l.last = nil, nil
	return first
}

// extract takes the waiters that match off the list and returns them,
// linked through next, oldest first, as detach does.
func (l *waitList[T]) extract(match func(*waiter[T]) bool) *waiter[T] {
	var first, last *waiter[T]
	for w := l.first; w != nil; {
		next := w.next
		if match(w) {
			l.remove(w)
			if last == nil {
				first = w
			} else {
				last.next = w
			}
			last = w
		}
		w = next
	}
	return first
}
