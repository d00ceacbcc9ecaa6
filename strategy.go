package crew

import (
	"math/rand/v2"
	"strconv"
	"sync/atomic"
)

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
		return s.rs.score()
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
// safe for concurrent use. Create one with NewPicker: the zero value's Pick
// panics, as a nil *Picker's does.
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
func (p *Picker) Pick() int {
	if p == nil || p.strategy == nil {
		p.unmade()
	}
	return p.strategy.pick(p.slots)
}

// unmade panics for the Pick of a zero or nil Picker.
func (p *Picker) unmade() {
	if p == nil {
		panic("crew: Picker.Pick: nil Picker: make one with NewPicker")
	}
	panic("crew: Picker.Pick: the Picker was not made by NewPicker: use it")
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
