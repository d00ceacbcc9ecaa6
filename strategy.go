package crew

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
)

// ErrNoRoutee is returned by a Router's Tell and Broadcast when it has no
// live routee to send to, its routees having stopped on their own (after
// the router's own Stop or Drain, they return ErrStopped); the caller still
// has the message. A pool whose workers have all died returns an error
// that errors.Is matches with it.
var ErrNoRoutee = errors.New("crew: router has no live routee")

// A Routee is what a Strategy chooses between: *Ref satisfies it. Len is
// the number of queued messages, or a negative number when the depth is
// unknown; Busy reports whether a message is being handled. A Routee may
// also have Stopped() bool (no strategy chooses a stopped routee) and
// Full() bool (SmallestMailbox and SmallestOfTwo choose a full one only when
// all are full); *Ref has both.
type Routee interface {
	Len() int
	Busy() bool
}

// A Strategy decides which routee of a Router gets each message: RoundRobin,
// Random, SmallestMailbox or SmallestOfTwo. In a pool it decides which idle
// worker a job is handed to when several are idle (see Pool). A Strategy
// keeps a little state (a rotation counter) and is safe for concurrent use;
// give each router or pool its own. Strategies are implemented by this
// package.
type Strategy interface {
	// pick returns the index in slots of the routee for the next message, or
	// -1 when every routee has stopped.
	pick(slots []slot) int
	// firstIdle returns where a pool starts looking for an idle worker among
	// n, given next, the worker after the one it chose last: a strategy
	// that rotates starts there, a random one anywhere. Every idle worker
	// scores 0, so for SmallestMailbox this is its rotation of ties.
	firstIdle(next, n int) int
}

// A slot is one routee as a strategy sees it: a *Ref's routeState, read with
// atomic loads, or another Routee through its methods.
type slot struct {
	rs      *routeState
	r       Routee
	stopped func() bool // r's Stopped, if it has one
	full    func() bool // r's Full, if it has one
}

// unknownScore ranks a routee whose depth is unknown after every routee
// whose depth is known, so it never wins by default (as a score of 0 would).
const unknownScore = int(^uint(0)>>1) - 1

func newSlot(r Routee) slot {
	if rs, ok := r.(interface{ state() *routeState }); ok {
		return slot{rs: rs.state(), r: r}
	}
	s := slot{r: r}
	if x, ok := r.(interface{ Stopped() bool }); ok {
		s.stopped = x.Stopped
	}
	if x, ok := r.(interface{ Full() bool }); ok {
		s.full = x.Full
	}
	return s
}

// score is the routee's load: queued messages, plus 1 while busy.
func (s *slot) score() int {
	if s.rs != nil {
		return int(s.rs.load.Load())
	}
	n := s.r.Len()
	if n < 0 {
		return unknownScore
	}
	if s.r.Busy() {
		n++
	}
	return n
}

func (s *slot) isStopped() bool {
	if s.rs != nil {
		return s.rs.stopped.Load()
	}
	return s.stopped != nil && s.stopped()
}

func (s *slot) isFull() bool {
	if s.rs != nil {
		return s.rs.full != nil && s.rs.full()
	}
	return s.full != nil && s.full()
}

// nextLive returns the first routee from start on (wrapping) that has not
// stopped, or -1.
func nextLive(slots []slot, start int) int {
	for i := range slots {
		j := start + i
		if j >= len(slots) {
			j -= len(slots)
		}
		if !slots[j].isStopped() {
			return j
		}
	}
	return -1
}

// RoundRobin returns a Strategy that sends messages to the routees in turn,
// skipping stopped ones. It costs one atomic add per message, whatever the
// number of routees, and ignores load: a routee stuck on a slow message keeps
// getting its share, which queues behind it.
func RoundRobin() Strategy { return &roundRobin{} }

type roundRobin struct{ next atomic.Uint64 }

func (*roundRobin) firstIdle(next, _ int) int { return next }

func (s *roundRobin) pick(slots []slot) int {
	if len(slots) == 0 {
		return -1
	}
	return nextLive(slots, int((s.next.Add(1)-1)%uint64(len(slots))))
}

// Random returns a Strategy that sends each message to a routee chosen
// uniformly at random, skipping stopped ones. It costs one call to a
// per-thread random source per message and, like RoundRobin, ignores load.
func Random() Strategy { return random{} }

type random struct{}

func (random) firstIdle(_, n int) int { return rand.IntN(n) }

func (random) pick(slots []slot) int {
	if len(slots) == 0 {
		return -1
	}
	return nextLive(slots, rand.IntN(len(slots)))
}

// A Picker applies a Strategy to routees of any kind, for callers that route
// to something other than a *Ref (a connection pool, a remote service) and
// call it themselves. A Router is a Picker over its *Ref routees. A Picker is
// safe for concurrent use. Create one with NewPicker.
type Picker struct {
	strategy Strategy
	slots    []slot
}

// NewPicker returns a Picker that chooses among routees with s. It panics if
// s or a routee is nil.
func NewPicker(s Strategy, routees ...Routee) *Picker {
	if s == nil {
		panic("crew: NewPicker: nil Strategy")
	}
	p := &Picker{strategy: s, slots: make([]slot, len(routees))}
	for i, r := range routees {
		if r == nil {
			panic("crew: NewPicker: nil routee at index " + strconv.Itoa(i))
		}
		p.slots[i] = newSlot(r)
	}
	return p
}

// Pick returns the index of the routee for the next message, or -1 when
// there is none that has not stopped. It does not allocate.
func (p *Picker) Pick() int { return p.strategy.pick(p.slots) }

// A Router sends each message to one of its routees, as its Strategy picks,
// or to all of them with Broadcast. Create one over actors you spawned with
// NewRouter, or let SpawnRouter spawn them. A Router is safe for concurrent
// use; stopped routees are skipped, never sent to.
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
// calls its factory once per actor; WithName names them name-0, name-1, ...)
// and WithStrategy chooses the strategy, SmallestMailbox by default.
//
// With WithKey the router keeps each key's messages in order, one at a
// time, as a keyed pool does (see WithKey): a message whose key has one in a
// routee's mailbox or being handled waits in the router, and the strategy
// places it when that one is done. With WithConsistentHash each key's
// messages go to one routee. Send a keyed router's messages through its
// Tell, not to a routee directly, which would bypass its keys. Such a router
// takes the default mailbox (WithMailbox panics); Broadcast ignores keys.
// SpawnRouter panics if n is less than 1 or an option does not apply to a
// router.
func SpawnRouter[T any](ctx context.Context, n int, handle func(context.Context, T) error, opts ...Option) *Router[T] {
	if n < 1 {
		panic("crew: SpawnRouter: n must be at least 1, got " + strconv.Itoa(n))
	}
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
	var rk *routerKeys[T]
	if o.keyed != nil {
		rk = newRouterKeys[T](n, &o)
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
		name := strconv.Itoa(i)
		if o.name != "" {
			name = o.name + "-" + name
		}
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
	return r
}

// WithStrategy sets the strategy of a router that spawns its routees
// (SpawnRouter), or of a pool. A router's strategy picks the routee of each
// message. A pool's picks which idle worker a job is handed to when several
// are idle: every idle worker scores 0, so SmallestMailbox and RoundRobin
// rotate through them and Random and SmallestOfTwo pick one at random; a
// job never goes to a busy worker while one is idle, whatever the strategy.
// The default is SmallestMailbox.
func WithStrategy(s Strategy) Option {
	if s == nil {
		panic("crew: WithStrategy: nil Strategy")
	}
	return func(o *options) { o.set |= optStrategy; o.strategy = s }
}

// Tell sends msg to the routee the strategy picks; see Ref.Tell for what it
// returns. If that routee stopped in the meantime, Tell picks again. It
// returns ErrNoRoutee, and creates no dead letter, when every routee has
// stopped. It does not allocate when the message is accepted. It panics if
// ctx is nil.
func (r *Router[T]) Tell(ctx context.Context, msg T) error {
	if ctx == nil {
		panic("crew: Router.Tell: nil context")
	}
	if r.stopped.Load() {
		r.refuse(msg)
		return ErrStopped
	}
	if r.keyed != nil {
		return r.keyed.tell(ctx, msg)
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
	if ctx == nil {
		panic("crew: Router.Broadcast: nil context")
	}
	if r.stopped.Load() {
		r.refuse(msg)
		return ErrStopped
	}
	if r.keyed != nil {
		live, refused, errs := r.keyed.broadcast(ctx, msg)
		if live == 0 {
			return ErrNoRoutee
		}
		for i, ref := range refused {
			ref.deadLetterTo(r.keyed.sink, msg, errs[i])
			errs[i] = fmt.Errorf("routee %q: %w", ref.name, errs[i])
		}
		return errors.Join(errs...)
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

// Routees returns a copy of the router's list of routees, in their order.
func (r *Router[T]) Routees() []*Ref[T] { return slices.Clone(r.refs) }

// Stop stops every routee (see Ref.Stop), and the router: from now on Tell
// and Broadcast return ErrStopped and record the message as a dead letter.
// It does not wait: receive from Done for that.
func (r *Router[T]) Stop() {
	r.stopped.Store(true)
	for _, ref := range r.refs {
		ref.Stop()
	}
}

// Drain stops the router as Stop does, but lets every routee handle what
// is queued in its mailbox first (see Ref.Drain). It does not wait:
// receive from Done for that. A keyed router's messages held behind their
// keys are not in a mailbox yet: they become dead letters as their keys
// free, since a draining routee takes no new message.
func (r *Router[T]) Drain() {
	r.stopped.Store(true)
	for _, ref := range r.refs {
		ref.Drain()
	}
}

// Done returns a channel that is closed once every routee's goroutine has
// exited (see Ref.Done): after Stop or Drain, or when each routee stopped
// on its own. A router with no routee is done at once.
func (r *Router[T]) Done() <-chan struct{} {
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

// refuse records msg, told to the router after Stop or Drain, as a dead
// letter: to a keyed router's sink, or to its first routee's.
func (r *Router[T]) refuse(msg T) {
	switch {
	case r.keyed != nil:
		r.keyed.sink(DeadLetter{Message: msg, Target: r.keyed.name, Reason: ErrStopped})
	case len(r.refs) > 0:
		r.refs[0].deadLetter(msg, ErrStopped)
	}
}
