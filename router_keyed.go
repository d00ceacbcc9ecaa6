package crew

import (
	"context"
	"sync"
)

// routerKeys dispatches a keyed router's messages (SpawnRouter with WithKey
// or WithConsistentHash), with the mechanism of keyed pools: WithKey's gate
// holds a message back while its key has one in a routee's mailbox or
// being handled, and places it, with the router's strategy, once that one
// is done; WithConsistentHash's pin sends each message to its key's routee.
type routerKeys[T any] struct {
	mu   sync.Mutex // guards gate, and placed
	gate *gate[T]
	pin  keyPin[T]
	up   func(int) bool

	refs   []*Ref[T]
	picker *Picker // the router's
	// placed has, for each routee and each message in its mailbox or being
	// handled, in order, whether the message passed the gate (Broadcast's
	// did not): its end must then let the next message of its key go.
	placed []ring[bool]
	sink   func(DeadLetter) // the user's, or the log
	name   string
}

func newRouterKeys[T any](n int, o *options) *routerKeys[T] {
	rk := &routerKeys[T]{placed: make([]ring[bool], n), sink: o.deadLetters, name: o.name}
	keys, pin := keyedFor[T](o, "router", "messages")
	if keys != nil {
		rk.gate = &gate[T]{keys}
	}
	rk.pin = pin
	if rk.sink == nil {
		rk.sink = logDeadLetter
	}
	return rk
}

// forRoutee adapts routee i's handler and dead-letter sink so that a
// message that passed the gate lets the next of its key go once it has been
// handled (or has panicked, or called runtime.Goexit), or has become a
// dead letter in the routee's mailbox.
func (rk *routerKeys[T]) forRoutee(i int, handle func(context.Context, T) error, o *options) func(context.Context, T) error {
	if rk.gate == nil {
		return handle
	}
	o.deadLetters = func(d DeadLetter) {
		if msg, ok := d.Message.(T); ok {
			rk.release(i, msg)
		}
		rk.sink(d)
	}
	return func(ctx context.Context, msg T) error {
		rk.mu.Lock()
		gated, _ := rk.placed[i].pop() // this message's flag: it left the mailbox
		rk.mu.Unlock()
		defer rk.releaseGated(msg, gated)
		return handle(ctx, msg)
	}
}

// bind gives the router's routees and picker, once they exist.
func (rk *routerKeys[T]) bind(r *Router[T]) {
	rk.refs, rk.picker = r.refs, &r.picker
	rk.up = func(i int) bool { return !r.refs[i].stopped.Load() }
}

// tell sends msg on, or holds it behind its key. A routee that refused it
// gets it as a dead letter, to the user's sink (sink) or its own.
func (rk *routerKeys[T]) tell(ctx context.Context, msg T) error {
	by, sink, err := rk.route(ctx, msg)
	switch {
	case by == nil:
	case sink:
		by.deadLetterTo(rk.sink, msg, err)
	default:
		by.deadLetter(msg, err)
	}
	return err
}

// route is tell under the lock, which a panicking key function releases.
func (rk *routerKeys[T]) route(ctx context.Context, msg T) (by *Ref[T], sink bool, err error) {
	rk.mu.Lock()
	defer rk.mu.Unlock()
	if rk.pin != nil {
		// A routee that stopped after place saw it up refuses with
		// ErrStopped: place again, and the key moves to a live one.
		for range len(rk.refs) {
			i := rk.pin.place(msg, len(rk.refs), rk.up)
			if i < 0 {
				break
			}
			// Queued under the lock, so that a key's messages reach their
			// routee in the order their Tells took it; the mailbox is
			// unbounded, so this never blocks.
			switch err := rk.refs[i].tell(ctx, msg); err {
			case nil:
				return nil, false, nil
			case ErrStopped:
				continue
			default:
				return rk.refs[i], false, err
			}
		}
		return nil, false, ErrNoRoutee
	}
	if !rk.gate.enter(msg) {
		return nil, false, nil // it goes once the key's message before it is done
	}
	by, err = rk.place(msg)
	if err != nil {
		rk.gate.leave(msg) // nothing queued behind it meanwhile: we hold the lock
	}
	return by, true, err
}

// place tells msg, whose key is free, to the routee the strategy picks,
// picking again if that one stopped meanwhile. It returns ErrNoRoutee when
// every routee has stopped, or the routee that refused msg and why. rk.mu is
// held.
func (rk *routerKeys[T]) place(msg T) (*Ref[T], error) {
	for range len(rk.refs) {
		i := rk.picker.Pick()
		if i < 0 {
			break
		}
		switch err := rk.refs[i].tell(context.Background(), msg); err {
		case nil:
			rk.placed[i].push(true)
			return nil, nil
		case ErrStopped:
			continue
		default:
			return rk.refs[i], err
		}
	}
	return nil, ErrNoRoutee
}

// release is told that a message of routee i was handled or dead-lettered.
// If it passed the gate, the next message of its key is placed; one that no
// routee takes, there being none left, becomes a dead letter, and lets the
// next go in turn.
func (rk *routerKeys[T]) release(i int, msg T) {
	rk.mu.Lock()
	gated, _ := rk.placed[i].pop()
	rk.mu.Unlock()
	rk.releaseGated(msg, gated)
}

func (rk *routerKeys[T]) releaseGated(msg T, gated bool) {
	type refusal struct {
		msg T
		by  *Ref[T]
		err error
	}
	var refused []refusal
	rk.mu.Lock()
	for next, ok := msg, gated; ok; {
		if next, ok = rk.gate.leave(next); !ok {
			break
		}
		by, err := rk.place(next)
		if err == nil {
			break
		}
		refused = append(refused, refusal{next, by, err})
	}
	rk.mu.Unlock()
	for _, r := range refused {
		if r.by != nil {
			r.by.deadLetterTo(rk.sink, r.msg, r.err)
		} else {
			rk.sink(DeadLetter{Message: r.msg, Target: rk.name, Reason: r.err})
		}
	}
}

// broadcast tells msg to every routee that has not stopped, outside the
// gate, and returns the routees that refused it and why.
func (rk *routerKeys[T]) broadcast(ctx context.Context, msg T) (live int, refused []*Ref[T], errs []error) {
	rk.mu.Lock()
	defer rk.mu.Unlock()
	for i, ref := range rk.refs {
		if ref.stopped.Load() {
			continue
		}
		live++
		if err := ref.tell(ctx, msg); err != nil {
			refused, errs = append(refused, ref), append(errs, err)
			continue
		}
		if rk.gate != nil {
			rk.placed[i].push(false)
		}
	}
	return live, refused, errs
}

// Keys reports how many keys a keyed router (SpawnRouter with WithKey) has
// busy now: those with a message in a routee's mailbox or being handled.
// It is 0 for other routers.
func (r *Router[T]) Keys() int {
	if r.keyed == nil || r.keyed.gate == nil {
		return 0
	}
	r.keyed.mu.Lock()
	defer r.keyed.mu.Unlock()
	return r.keyed.gate.keys.active()
}
