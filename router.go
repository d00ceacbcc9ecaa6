package crew

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
)

// A Router sends each message to one of its routees, as its Strategy picks,
// or to all of them with Broadcast. Create one over actors you spawned with
// NewRouter, or let SpawnRouter spawn them. A Router is safe for concurrent
// use; stopped routees are skipped, never sent to (but for a keyed router's
// draining routees, which take the messages it holds: see Router.Drain).
// The zero value is not usable: its methods panic, as a nil *Router's do.
type Router[T any] struct {
	picker  Picker
	refs    []*Ref[T]
	keyed   *routerKeys[T] // SpawnRouter with WithKey or WithConsistentHash
	stopped atomic.Bool    // Stop or Drain: Tell and Broadcast refuse

	doneOnce sync.Once
	done     chan struct{} // Done's: closed once every routee's is
	left     atomic.Int32  // routees whose Done is not closed yet
}

// NewRouter returns a Router over routees (it keeps its own copy of the
// list). Stop on the router stops them. It panics if s or a routee is nil. A
// router with no routee is valid: Tell returns ErrNoRoutee.
func NewRouter[T any](s Strategy, routees ...*Ref[T]) *Router[T] {
	if s == nil {
		panic("crew: NewRouter: nil Strategy")
	}
	routees = slices.Clone(routees)
	r := &Router[T]{picker: Picker{strategy: s, slots: make([]slot, len(routees))}, refs: routees}
	for i, ref := range routees {
		if ref == nil {
			panic("crew: NewRouter: nil routee at index " + strconv.Itoa(i))
		}
		r.picker.slots[i] = newSlot(ref)
	}
	return r
}

// SpawnRouter spawns n actors that run handle and returns a Router over
// them: the pool variant. The options apply to every actor (WithMailbox
// calls its factory once per actor) and WithStrategy chooses the strategy,
// SmallestMailbox by default. WithName names the router, and its routees
// name-0, name-1, ...: without it, the router is "router-1", "router-2",
// ... in the order of their SpawnRouter calls, as pools are named.
// WithMetrics reports the routees together, as one source named after the
// router.
//
// With WithKey the router keeps each key's messages in order, one at a
// time, as a keyed pool does (see WithKey): a message whose key has one in a
// routee's mailbox or being handled waits in the router, and the strategy
// places it when that one is done. With WithConsistentHash each key's
// messages go to its routee, and move to another only once that one has
// stopped and the key's messages there have ended, those told meanwhile
// waiting in the router. Either way the end of a key's message, handled
// or dead-lettered, happens before the next message of its key starts;
// Drain handles the messages the router holds too (see Router.Drain).
// Send a keyed router's messages through its Tell, not to a routee
// directly, which would bypass its keys. Such a router
// takes the default mailbox (WithMailbox panics); Broadcast ignores keys.
// SpawnRouter panics if n is not between 1 and 1<<24 (the most workers a
// pool takes: a goroutine each, spawned at once) or an option does not
// apply to a router; it checks n before it makes anything.
func SpawnRouter[T any](ctx context.Context, n int, handle func(context.Context, T) error, opts ...Option) *Router[T] {
	checkSize("SpawnRouter", "n", n, maxWorkers)
	o := collect(opts)
	o.only("SpawnRouter", routerOpts)
	s := o.strategy
	if s == nil {
		s = SmallestMailbox()
	}
	if ctx == nil {
		panic("crew: SpawnRouter: nil context")
	}
	if handle == nil {
		panic("crew: SpawnRouter: nil handler")
	}
	if o.name == "" {
		o.name = "router-" + strconv.FormatInt(routerSeq.Add(1), 10)
	}
	var router atomic.Pointer[Router[T]] // for the gauges, once made
	if o.metrics != nil {
		o.recorder = o.metrics.Track(Source{Kind: SourceRouter, Name: o.name, Gauges: func() Gauges { return router.Load().gauges() }})
		o.metrics = nil // the routees report to the router's recorder, or to none
	}
	rec := o.recorder
	var rk *routerKeys[T]
	if o.keyed != nil {
		rk = newRouterKeys[T](n, &o)
		rk.rec = rec // counts the messages it holds behind their keys and refuses
	}
	// Make every mailbox before any routee starts, so that a factory that
	// fails (panics, or returns nil) leaves no routee running.
	var boxes []Mailbox[T]
	if o.newMailbox != nil {
		f, ok := o.newMailbox.(func() Mailbox[T])
		if !ok {
			panic(fmt.Sprintf("crew: WithMailbox: a %T does not make mailboxes for %T messages", o.newMailbox, *new(T)))
		}
		boxes = make([]Mailbox[T], n)
		for i := range boxes {
			boxes[i] = made(f())
		}
	}
	refs := make([]*Ref[T], n)
	for i := range refs {
		name := o.name + "-" + strconv.Itoa(i)
		ro, h := o, handle
		if boxes != nil {
			mb := boxes[i]
			ro.newMailbox = func() Mailbox[T] { return mb }
		}
		if rk != nil {
			h = rk.forRoutee(i, handle, &ro)
		}
		refs[i] = spawn(ctx, h, &ro, name)
	}
	r := NewRouter(s, refs...)
	if rk != nil {
		rk.bind(r)
		r.keyed = rk
	}
	if rec != nil {
		router.Store(r)
		var left atomic.Int32
		left.Store(int32(n))
		for _, ref := range refs {
			ref.whenDone(func() {
				if left.Add(-1) == 0 {
					rec.Close()
				}
			})
		}
	}
	return r
}

// gauges reads the gauges of a router's routees together, for its
// Recorder's Source; r may be nil, while SpawnRouter makes it.
func (r *Router[T]) gauges() Gauges {
	var g Gauges
	if r == nil {
		return g
	}
	for _, ref := range r.refs {
		rg := ref.gauges()
		g.Queued += rg.Queued
		g.Running += rg.Running
		g.Workers += rg.Workers
	}
	return g
}

// routerSeq numbers the routers spawned without a name.
var routerSeq atomic.Int64

// Tell sends msg to the routee the strategy picks; see Ref.Tell for what it
// returns. If that routee stopped in the meantime, Tell picks again. It
// returns ErrNoRoutee, and creates no dead letter, when every routee has
// stopped. It does not allocate when the message is accepted. It panics if
// ctx is nil.
func (r *Router[T]) Tell(ctx context.Context, msg T) error {
	if r == nil || r.picker.strategy == nil {
		r.unmade("Tell")
	}
	if ctx == nil {
		panic("crew: Router.Tell: nil context")
	}
	if r.stopped.Load() {
		r.refuse(msg)
		return ErrStopped
	}
	if r.keyed != nil {
		return r.keyed.tell(msg)
	}
	for range len(r.refs) {
		i := r.picker.Pick()
		if i < 0 {
			break
		}
		err := r.refs[i].tell(ctx, msg)
		if err != ErrStopped {
			if err != nil {
				r.refs[i].deadLetter(msg, err)
			}
			return err
		}
	}
	return ErrNoRoutee
}

// Broadcast tells msg to every routee that has not stopped. It returns
// ErrNoRoutee if there is none, and otherwise the errors of the routees that
// did not accept it, joined (each such message is a dead letter). It panics
// if ctx is nil.
func (r *Router[T]) Broadcast(ctx context.Context, msg T) error {
	if r == nil || r.picker.strategy == nil {
		r.unmade("Broadcast")
	}
	if ctx == nil {
		panic("crew: Router.Broadcast: nil context")
	}
	if r.stopped.Load() {
		r.refuse(msg)
		return ErrStopped
	}
	var errs []error
	live := 0
	for i, ref := range r.refs {
		if r.picker.slots[i].isStopped() {
			continue
		}
		live++
		if err := ref.Tell(ctx, msg); err != nil {
			errs = append(errs, fmt.Errorf("routee %q: %w", ref.name, err))
		}
	}
	if live == 0 {
		return ErrNoRoutee
	}
	return errors.Join(errs...)
}

// DeadLetters reports how many of the router's messages became dead
// letters: its routees' (see Ref.DeadLetters) and, for a keyed router,
// those it held behind their keys or refused itself, together. It is the
// number of DeadLetter values its routees' and its own sinks received.
func (r *Router[T]) DeadLetters() int64 {
	if r == nil || r.picker.strategy == nil {
		r.unmade("DeadLetters")
	}
	var n int64
	if r.keyed != nil {
		n = r.keyed.dead.Load()
	}
	for _, ref := range r.refs {
		n += ref.DeadLetters()
	}
	return n
}

// Routees returns a copy of the router's list of routees, in their order.
func (r *Router[T]) Routees() []*Ref[T] {
	if r == nil || r.picker.strategy == nil {
		r.unmade("Routees")
	}
	return slices.Clone(r.refs)
}

// Stop stops every routee (see Ref.Stop), and the router: from now on Tell
// and Broadcast return ErrStopped and record the message as a dead letter.
// The messages queued in the routees' mailboxes, and those a keyed router
// holds behind their keys, become dead letters with ErrStopped. It does not
// wait: receive from Done for that.
func (r *Router[T]) Stop() {
	if r == nil || r.picker.strategy == nil {
		r.unmade("Stop")
	}
	r.stopped.Store(true)
	if r.keyed != nil {
		r.keyed.stop()
	}
	for _, ref := range r.refs {
		ref.Stop()
	}
}

// Drain stops the router as Stop does, but lets every routee handle what
// is queued in its mailbox first (see Ref.Drain): the router handles what
// it accepted, then stops. From Drain on, Tell and Broadcast return
// ErrStopped, and so does each routee's own Tell. A keyed router goes on
// sending the messages it holds behind their keys, each key's in the
// order they were told and one at a time as before, to its routees, which
// take them while they drain; a routee whose mailbox empties waits while
// the router still holds messages, and the routees end, and Done closes,
// only once none is left. A held message that no routee can take, every
// routee having been stopped (Ref.Stop, its context) meanwhile, is a
// dead letter with ErrNoRoutee; one that raced Drain and found the
// routees ended, with ErrStopped. Drain does not wait: receive from Done
// for that. Stop during a Drain stops the routees at once, and the held
// messages become dead letters with ErrStopped.
func (r *Router[T]) Drain() {
	if r == nil || r.picker.strategy == nil {
		r.unmade("Drain")
	}
	r.stopped.Store(true)
	if r.keyed != nil {
		r.keyed.drain() // before the routees drain, so that they linger
	}
	for _, ref := range r.refs {
		ref.Drain()
	}
}

// Done returns a channel that is closed once every routee's goroutine has
// exited (see Ref.Done): after Stop or Drain, or when each routee stopped
// on its own. A router with no routee is done at once.
func (r *Router[T]) Done() <-chan struct{} {
	if r == nil || r.picker.strategy == nil {
		r.unmade("Done")
	}
	r.doneOnce.Do(func() {
		r.done = make(chan struct{})
		r.left.Store(int32(len(r.refs)))
		if len(r.refs) == 0 {
			close(r.done)
		}
		for _, ref := range r.refs {
			ref.whenDone(func() {
				if r.left.Add(-1) == 0 {
					close(r.done)
				}
			})
		}
	})
	return r.done
}

// unmade panics, naming the method: every method of a zero Router does,
// for it has no strategy (NewRouter requires one) and would otherwise
// refuse every message quietly as a router with no routee, and so does
// every method of a nil *Router.
func (r *Router[T]) unmade(method string) {
	if r == nil {
		panic("crew: Router." + method + ": nil Router: make one with NewRouter or SpawnRouter")
	}
	panic("crew: Router." + method + ": the Router was not made by NewRouter or SpawnRouter: use one of them")
}

// refuse records msg, told to the router after Stop or Drain, as a dead
// letter: to a keyed router's sink, or to its first routee's.
func (r *Router[T]) refuse(msg T) {
	switch {
	case r.keyed != nil:
		r.keyed.deadLetter(msg, ErrStopped)
	case len(r.refs) > 0:
		r.refs[0].deadLetter(msg, ErrStopped)
	}
}
