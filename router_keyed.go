package crew

import (
	"context"
	"sync"
	"sync/atomic"

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
//
// A draining router (Router.Drain) goes on sending its held messages, each
// key's in turn as before, to routees that have not left: they drain too,
// and take no new Tell, but a routee whose mailbox empties waits while the
// router still holds messages (linger), so that the held messages are
// handled rather than dead-lettered. A routee leaves under the router's
// lock, once its mailbox is empty and the router holds nothing: the
// router sends it nothing after that, so nothing is left in its mailbox
// for its shutdown to dead-letter.
type routerKeys[T any] struct {
	mu       sync.Mutex                   // guards keys and the fields below it
	keys     *keys.Table[T, routerKey[T]] // the keys with messages out or waiting, and their records
	held     int                          // the messages waiting behind their keys, of every key
	draining bool                         // Router.Drain was called: the routees take held messages until none is left
	stopped  bool                         // Router.Stop was called: held messages are dead letters with ErrStopped
	left     []bool                       // by routee, while the router drains: it found nothing more to take, and ends

	pin  keys.Pin[T]    // WithConsistentHash's; nil for WithKey's
	upFn func(int) bool // up, made once: a method value passed to Place would be made, on the heap, at each call

	refs     []*Ref[T]
	boxes    []*routeeBox[T]  // the routees' mailboxes
	picker   *Picker          // the router's
	leftover *Picker          // the router's strategy over the routees that take its messages (see up), for a draining router
	sink     func(DeadLetter) // WithDeadLetters, or nil: logged
	deadLog  sparse           // the dead letters logged without a sink (see sendDeadLetter)
	dead     atomic.Int64     // the router's own dead letters (see deadLetter)
	name     string           // the router's, for its dead letters
	rec      Recorder         // WithMetrics: the router's, or nil
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
	rk.left = make([]bool, n)
	rk.upFn = rk.up
	return rk
}

// forRoutee gives routee i its mailbox, whose parcels carry their keys, and
// its handler, which ends the turn of the key of each message it handles
// once the handler has returned (or panicked, or called runtime.Goexit).
func (rk *routerKeys[T]) forRoutee(i int, handle func(context.Context, T) error, o *options) func(context.Context, T) error {
	box := newRouteeBox(rk.end)
	rk.boxes[i] = box
	o.newMailbox = func() Mailbox[T] { return box }
	box.waits = func() bool { return rk.linger(i) }
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
	slots := make([]slot, len(r.refs))
	for i, ref := range r.refs {
		slots[i] = slot{r: ref, stopped: func() bool { return !rk.up(i) }} // read under rk.mu, as the router drains
	}
	rk.leftover = &Picker{strategy: r.picker.strategy, slots: slots}
}

// up reports whether routee i takes the router's messages: one that has
// not stopped, or, while the router drains, one that has neither left nor
// shut down (it drains, and takes the router's held messages). rk.mu is
// held.
func (rk *routerKeys[T]) up(i int) bool {
	if rk.draining {
		return !rk.left[i] && !rk.refs[i].shut.Load()
	}
	return !rk.refs[i].stopped.Load()
}

// linger reports whether routee i, draining, and whose Dequeue found its
// mailbox empty, must wait rather than end: the router drains and still
// holds messages, or sent it one since. Otherwise the routee leaves: from
// here on the router sends it nothing.
func (rk *routerKeys[T]) linger(i int) bool {
	rk.mu.Lock()
	defer rk.mu.Unlock()
	if rk.draining && !rk.stopped && (rk.held > 0 || rk.boxes[i].Len() > 0) {
		return true // the routee finds the message sent when it looks at its mailbox before it parks; or the router's end of holding wakes it
	}
	rk.left[i] = true // it ends (drained on its own, or the router's Drain is over, or Stop)
	return false
}

// drain starts the router's Drain; stop, its Stop.
func (rk *routerKeys[T]) drain() {
	rk.mu.Lock()
	rk.draining = true
	rk.mu.Unlock()
}

func (rk *routerKeys[T]) stop() {
	rk.mu.Lock()
	rk.stopped = true
	rk.mu.Unlock()
}

// deadLetter counts msg as one of the router's own dead letters and
// delivers it to the sink.
func (rk *routerKeys[T]) deadLetter(msg T, reason error) {
	rk.dead.Add(1)
	if rk.rec != nil {
		rk.rec.Add(EventDropped, 1)
	}
	sendDeadLetter(rk.sink, &rk.deadLog, DeadLetter{Message: msg, Target: rk.name, Reason: reason})
}

// tell sends msg on, or holds it behind its key. A routee that refused it
// records it as a dead letter.
func (rk *routerKeys[T]) tell(msg T) error {
	by, err := rk.route(msg)
	switch {
	case by != nil:
		by.deadLetter(msg, err)
	case err == ErrStopped: // it raced the router's Drain, and found no routee left
		rk.deadLetter(msg, err)
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
	if rk.pin != nil && key.running == 0 && key.waiting.Len() == 0 {
		key.hash = rk.pin.Hash(msg) // a new key: placed by it from now on, its key function not called again
	}
	if key.waiting.Len() > 0 {
		rk.hold(key, msg) // behind the messages of its key that wait already
		return nil, nil
	}
	wait, by, err := rk.send(key, msg)
	switch {
	case wait:
		rk.hold(key, msg)
	case key.running == 0:
		rk.release(key) // refused, and nothing of its key is out
	}
	if err == ErrNoRoutee && (rk.draining || rk.stopped) {
		err = ErrStopped // the routees ended with the router: it is the router that stopped
	}
	return by, err
}

// hold keeps msg behind key's messages. rk.mu is held.
func (rk *routerKeys[T]) hold(key *routerKey[T], msg T) {
	key.waiting.Push(msg)
	rk.held++
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
	if rk.stopped {
		return false, nil, ErrNoRoutee // Router.Stop: the routees it has not stopped yet take nothing either
	}
	for range len(rk.refs) {
		switch {
		case key.running == 0:
			if key.routee = rk.choose(key); key.routee < 0 {
				return false, nil, ErrNoRoutee
			}
		case rk.pin == nil:
			return true, nil, nil // one message of a key out at a time
		}
		ref := rk.refs[key.routee]
		err := ErrStopped
		if rk.up(key.routee) {
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

// choose returns the routee for a message of key, which has none out, or
// -1 if every routee has stopped.
func (rk *routerKeys[T]) choose(key *routerKey[T]) int {
	switch {
	case rk.pin != nil:
		return rk.pin.PlaceHash(key.hash, len(rk.refs), rk.upFn)
	case rk.draining:
		return rk.leftover.Pick()
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
// becomes a dead letter, and lets the next go in turn. Once a draining
// router holds no more messages, it wakes the routees that linger, to
// end.
func (rk *routerKeys[T]) end(key *routerKey[T], msg T) {
	refused, emptied := rk.ended(key, msg)
	for _, r := range refused {
		if r.by != nil {
			r.by.deadLetter(r.msg, r.err)
		} else {
			rk.deadLetter(r.msg, r.err)
		}
	}
	if emptied {
		for _, ref := range rk.refs {
			ref.wake()
		}
	}
}

// ended is end under the lock, which a panicking key function releases.
// It reports the messages refused, and whether a draining router's last
// held message just left.
func (rk *routerKeys[T]) ended(key *routerKey[T], msg T) (refused []refusal[T], emptied bool) {
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
		rk.held--
		emptied = rk.held == 0 && rk.draining
		if err != nil {
			if err == ErrNoRoutee && rk.stopped {
				err = ErrStopped // Router.Stop stopped its routees
			}
			refused = append(refused, refusal[T]{next, by, err})
		}
	}
	if key.running == 0 && key.waiting.Len() == 0 {
		rk.release(key)
	}
	return refused, emptied
}

// A routerKey is a key with messages out (in a routee's mailbox, or being
// handled) or waiting behind them. The router's lock guards it.
type routerKey[T any] struct {
	waiting queue.Ring[T] // its messages waiting, oldest first
	running int           // its messages out
	routee  int           // the routee its messages out are at
	hash    uint64        // WithConsistentHash: the hash of its key, which places it
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
	if r == nil || r.picker.strategy == nil {
		r.unmade("Keys")
	}
	if r.keyed == nil {
		return 0
	}
	r.keyed.mu.Lock()
	defer r.keyed.mu.Unlock()
	return r.keyed.keys.Len()
}
