package crew

import (
	"context"
	"sync"

	"github.com/crewlib/crew/internal/keys"
	"github.com/crewlib/crew/internal/queue"
)

// routerKeys dispatches a keyed router's messages (SpawnRouter with WithKey
// or WithConsistentHash) one key at a time, as keyed pools do, over the
// same index of keys: each key with messages out (in a routee's mailbox,
// or being handled) or waiting behind them has a record (a routerKey). A
// WithKey key has one message out at a time,
// placed by the router's strategy; a WithConsistentHash key has its
// messages out at its routee, chosen by the pin, and moves to another only
// once that one stopped and the key's messages there have ended.
//
// Each message out travels in a parcel with its key's record (see
// routeeBox), and its end, handled or dead-lettered, ends that turn of
// its key: so the end of a key's message happens before a message of its
// key that waited behind it is told to a routee.
type routerKeys[T any] struct {
	mu   sync.Mutex                   // guards keys
	keys *keys.Table[T, routerKey[T]] // the keys with messages out or waiting, and their records
	pin  keys.Pin[T]                  // WithConsistentHash's; nil for WithKey's
	up   func(int) bool

	refs   []*Ref[T]
	boxes  []*routeeBox[T] // the routees' mailboxes
	picker *Picker         // the router's
	sink   func(DeadLetter)
	name   string   // the router's, for its dead letters
	rec    Recorder // WithMetrics: the router's, or nil
}

func newRouterKeys[T any](n int, o *options) *routerKeys[T] {
	rk := &routerKeys[T]{sink: o.deadLetters, name: o.name}
	index, pin := keyedFor[T](o, "router", "messages")
	if pin != nil {
		index = pin.Index()
	}
	bufs := queue.Shared[queue.Slabs[T]]()
	rk.pin, rk.keys = pin, keys.NewTable(index, func(slot int) *routerKey[T] {
		return &routerKey[T]{waiting: queue.RingOf(bufs), slot: slot}
	})
	rk.boxes = make([]*routeeBox[T], n)
	if rk.sink == nil {
		rk.sink = logDeadLetter
	}
	return rk
}

// forRoutee gives routee i its mailbox, whose parcels carry their keys, and
// its handler, which ends the turn of the key of each message it handles
// once the handler has returned (or panicked, or called runtime.Goexit).
func (rk *routerKeys[T]) forRoutee(i int, handle func(context.Context, T) error, o *options) func(context.Context, T) error {
	box := newRouteeBox(rk.end)
	rk.boxes[i] = box
	o.newMailbox = func() Mailbox[T] { return box }
	return func(ctx context.Context, msg T) error {
		if key := box.take(); key != nil {
			defer rk.end(key, msg)
		}
		return handle(ctx, msg)
	}
}

// bind gives the router's routees and picker, once they exist.
func (rk *routerKeys[T]) bind(r *Router[T]) {
	rk.refs, rk.picker = r.refs, &r.picker
	rk.up = func(i int) bool { return !r.refs[i].stopped.Load() }
}

// tell sends msg on, or holds it behind its key. A routee that refused it
// records it as a dead letter.
func (rk *routerKeys[T]) tell(msg T) error {
	by, err := rk.route(msg)
	switch {
	case by != nil:
		by.deadLetter(msg, err)
	case err == nil && rk.rec != nil: // told: sent on, or held behind its key
		rk.rec.Add(EventSubmitted, 1)
	}
	return err
}

// route is tell under the lock, which a panicking key function releases.
func (rk *routerKeys[T]) route(msg T) (by *Ref[T], err error) {
	rk.mu.Lock()
	defer rk.mu.Unlock()
	key := rk.keys.Get(msg)
	if key.waiting.Len() > 0 {
		key.waiting.Push(msg) // behind the messages of its key that wait already
		return nil, nil
	}
	wait, by, err := rk.send(key, msg)
	switch {
	case wait:
		key.waiting.Push(msg)
	case key.running == 0:
		rk.release(key) // refused, and nothing of its key is out
	}
	return by, err
}

// send tells msg, of key, with none of its key waiting before it, to a
// routee if its key lets it go now: a WithKey key once it has no message
// out, to the routee the strategy picks; a WithConsistentHash key to the
// routee its messages out are at, or, once none is out, to the one the
// pin chooses among the live ones. It is called under the lock, so that a
// key's messages reach their routee in the order their Tells took the
// lock; the mailbox is unbounded, so this never blocks.
//
// It reports whether msg must wait behind its key; otherwise the routee
// that refused it and why, or ErrNoRoutee once every routee has stopped.
func (rk *routerKeys[T]) send(key *routerKey[T], msg T) (wait bool, by *Ref[T], err error) {
	for range len(rk.refs) {
		switch {
		case key.running == 0:
			if key.routee = rk.choose(msg); key.routee < 0 {
				return false, nil, ErrNoRoutee
			}
		case rk.pin == nil:
			return true, nil, nil // one message of a key out at a time
		}
		ref := rk.refs[key.routee]
		err := ErrStopped
		if !ref.Stopped() {
			err = ref.queued(rk.boxes[key.routee].put(msg, key))
		}
		switch {
		case err == nil:
			key.running++
			return false, nil, nil
		case err != ErrStopped:
			return false, ref, err
		case key.running > 0:
			// Its routee stops, with messages of the key still there: the
			// key moves once they have ended, and msg waits until then.
			return true, nil, nil
		}
		// The routee stopped since it was chosen: choose among the others.
	}
	return false, nil, ErrNoRoutee
}

// choose returns the routee for a message whose key has none out, or -1 if
// every routee has stopped.
func (rk *routerKeys[T]) choose(msg T) int {
	if rk.pin != nil {
		return rk.pin.Place(msg, len(rk.refs), rk.up)
	}
	return rk.picker.Pick()
}

// A refusal is a message that waited behind its key and that no routee
// took once its turn came: a dead letter of the routee that refused it,
// or, when none was left, of the router.
type refusal[T any] struct {
	msg T
	by  *Ref[T]
	err error
}

// end is told that msg, which held a turn of key, has ended: it was
// handled, or became a dead letter. It sends the messages that waited
// behind it as far as their key lets them go; one that no routee takes
// becomes a dead letter, and lets the next go in turn.
func (rk *routerKeys[T]) end(key *routerKey[T], msg T) {
	for _, r := range rk.ended(key, msg) {
		if r.by != nil {
			r.by.deadLetter(r.msg, r.err)
		} else {
			rk.sink(DeadLetter{Message: r.msg, Target: rk.name, Reason: r.err})
		}
	}
}

// ended is end under the lock, which a panicking key function releases.
func (rk *routerKeys[T]) ended(key *routerKey[T], msg T) (refused []refusal[T]) {
	rk.mu.Lock()
	defer rk.mu.Unlock()
	key.running--
	for key.waiting.Len() > 0 {
		next := *key.waiting.Front()
		wait, by, err := rk.send(key, next)
		if wait {
			break
		}
		key.waiting.Pop()
		if err != nil {
			refused = append(refused, refusal[T]{next, by, err})
		}
	}
	if key.running == 0 && key.waiting.Len() == 0 {
		rk.release(key)
	}
	return refused
}

// A routerKey is a key with messages out (in a routee's mailbox, or being
// handled) or waiting behind them. The router's lock guards it.
type routerKey[T any] struct {
	waiting queue.Ring[T] // its messages waiting, oldest first
	running int           // its messages out
	routee  int           // the routee its messages out are at
	slot    int           // its slot in the router's index of keys
}

// release forgets key, which has no message out or waiting. A key that
// held a burst gives its buffer back; a small one keeps it for the next
// key given its slot. rk.mu is held.
func (rk *routerKeys[T]) release(key *routerKey[T]) {
	rk.keys.Release(key.slot)
	key.waiting.Trim()
}

// Keys reports how many keys a keyed router (SpawnRouter with WithKey or
// WithConsistentHash) has busy now: those with a message in a routee's
// mailbox, being handled, or waiting behind its key in the router. It is
// 0 for other routers.
func (r *Router[T]) Keys() int {
	if r.keyed == nil {
		return 0
	}
	r.keyed.mu.Lock()
	defer r.keyed.mu.Unlock()
	return r.keyed.keys.Len()
}
