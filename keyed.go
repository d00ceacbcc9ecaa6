package crew

import (
	"fmt"
	"hash/maphash"
)

// WithKey makes a typed pool, or a router from SpawnRouter, keep the jobs of
// each key in order: jobs with the same key run one after another, in the
// order they were submitted, never two at once, while jobs of different
// keys run in parallel. A pool calls key once per job, under its lock, as
// it accepts the job (for a Submit that waited for room, as the room
// opens), and keeps that key with the key's jobs until the last of them
// ends: a job may change what key would read. So key must be quick and
// must not block or use the pool. If key panics, or returns a key that
// equals no key (such as a NaN), Submit (or Tell) panics with that, on its
// caller's goroutine, and the pool takes nothing.
//
// A key holds at most one job dispatched at a time. A job whose key is free
// is dispatched at once, as any job of the pool is (to an idle worker, or
// into the backlog in submission order); a job whose key is busy waits
// behind its key, and is dispatched when the key's job before it ends,
// joining the backlog then. So keys spread over the workers as they free:
// a hot key occupies one worker at a time, never a worker's queue, and keys
// do not stay where they were first placed. A router places each such
// message with its strategy (SmallestMailbox by default) when it is
// dispatched. The key table holds only keys with jobs queued or running.
//
// It costs a map lookup under the pool's lock per job, and one more as a
// key's last job ends; no allocation per job in steady traffic. A keyed
// pool does not bound its
// jobs unless WithQueueSize(n) is given, which caps the pool as a whole at
// workers×(1+n) jobs, counting those waiting behind their keys: a hot key's
// backlog then blocks every Submit, other keys' too. A job's own Submit on
// a full keyed pool is queued beyond the bound instead of run inline, which
// would break its key's order. WithKey takes the default backlog:
// NewPool panics if WithMailbox is given too. T must be the job type of the
// pool (or the message type of the router). See WithConsistentHash for a
// fixed key-to-worker mapping.
func WithKey[T any, K comparable](key func(T) K) Option {
	if key == nil {
		panic("crew: WithKey: nil key function")
	}
	return func(o *options) {
		o.set |= optKey
		o.keyed = func() any { return newKeyFlows(key) }
	}
}

// WithConsistentHash makes a typed pool, or a router from SpawnRouter, send
// every job of a key to the same worker, chosen by rendezvous hashing of the
// key over the live workers (the highest of hash(key, worker)), so that a
// key keeps its worker across calls and runs: what per-worker caches need.
// Jobs of one key run in submission order, one at a time, queued at their
// worker. A router's key moves off its routee only when that routee stops
// or drains, and only once the key's messages there have ended (handled,
// or delivered as dead letters); the key's messages told meanwhile wait in
// the router, as WithKey's do. So the end of each message of a key happens
// before the start of the next. Unlike WithKey it ignores load: a hot key,
// or an unlucky spread of keys, leaves one worker with a queue while others
// idle. It costs one hash of the key and one per worker; a router also
// looks the key up in its table of busy keys, as WithKey does. Like
// WithKey, it takes the default backlog.
func WithConsistentHash[T any, K comparable](key func(T) K) Option {
	if key == nil {
		panic("crew: WithConsistentHash: nil key function")
	}
	return func(o *options) {
		o.set |= optKey
		o.keyed = func() any { return &rendezvous[T, K]{key: key, seed: maphash.MakeSeed()} }
	}
}

// keyedFor makes the keyed dispatch WithKey or WithConsistentHash asked
// for, for a pool or router (owner) whose jobs or messages (noun) are T: a
// flow per key, or a pin.
func keyedFor[T any](o *options, owner, noun string) (keyFlows[T], keyPin[T]) {
	if o.newMailbox != nil {
		panic("crew: WithKey and WithConsistentHash need the " + owner + "'s own mailbox: drop WithMailbox")
	}
	switch k := o.keyed().(type) {
	case keyFlows[T]:
		return k, nil
	case keyPin[T]:
		return nil, k
	}
	panic(fmt.Sprintf("crew: WithKey or WithConsistentHash: the key function does not take %T %s", *new(T), noun))
}

// keyFlows is WithKey's table of flows, one per key with a job queued or
// running, each with a limit of 1, so that the key's jobs run one at a
// time, in order: a keyed pool dispatches them as it does every flow, and
// a keyed router holds a message back while its key is busy (see
// routerKeys). Its owner guards it with a lock.
type keyFlows[T any] interface {
	// flow returns the flow of job's key, made if the key has none.
	flow(job T) *flow[T]
	// release forgets f, which has no job left, and its key.
	release(f *flow[T])
	// each calls visit with every flow, which may release it.
	each(visit func(*flow[T]))
	// active reports the keys with a flow.
	active() int
}

// keyFlowTable is WithKey's keyFlows. It reads a job's key once, in flow,
// and keeps it beside the flow (keys[f.key]) until release: reading it
// again there would find whatever the job made of it.
type keyFlowTable[T any, K comparable] struct {
	key  func(T) K
	m    map[K]*flow[T]
	keys []K                   // each flow's key, by flow.key; a released flow keeps its slot
	free []*flow[T]            // released flows, reused by the next keys
	bufs *slabs[waitingJob[T]] // the flows' buffers, recycled process-wide
}

func newKeyFlows[T any, K comparable](key func(T) K) *keyFlowTable[T, K] {
	return &keyFlowTable[T, K]{key: key, m: make(map[K]*flow[T]), bufs: shared[slabs[waitingJob[T]]]()}
}

func (t *keyFlowTable[T, K]) flow(job T) *flow[T] {
	k := t.key(job)
	if k != k {
		// A NaN (or a key holding one) would never be found again: its
		// entry would stay, and its jobs would not keep their order.
		panic("crew: WithKey: the key function returned a key that equals no key (NaN)")
	}
	if f, ok := t.m[k]; ok {
		return f
	}
	var f *flow[T]
	if n := len(t.free); n > 0 {
		f, t.free = t.free[n-1], t.free[:n-1]
	} else {
		f = &flow[T]{limit: 1, q: ring[waitingJob[T]]{bufs: t.bufs}, key: len(t.keys)}
		t.keys = append(t.keys, k)
	}
	t.m[k], t.keys[f.key] = f, k
	return f
}

func (t *keyFlowTable[T, K]) release(f *flow[T]) {
	var zero K
	delete(t.m, t.keys[f.key])
	t.keys[f.key] = zero // holds nothing the key pointed to
	// A flow that held a burst gives its buffer back to be recycled; a
	// small one stays with the flow. The free list is never longer than
	// the most keys with jobs at once.
	if len(f.q.buf) > minRingSlots {
		f.q.release()
	}
	t.free = append(t.free, f)
}

func (t *keyFlowTable[T, K]) each(visit func(*flow[T])) {
	for _, f := range t.m {
		visit(f)
	}
}

func (t *keyFlowTable[T, K]) active() int { return len(t.m) }

// A keyPin maps each job to the worker its key is pinned to
// (WithConsistentHash).
type keyPin[T any] interface {
	// place returns the worker among n for job, or -1 if none is up.
	place(job T, n int, up func(int) bool) int
	// flows returns a table of flows by key, in which a router keeps
	// each key's messages out and those waiting behind them.
	flows() keyFlows[T]
}

// rendezvous is WithConsistentHash's pin.
type rendezvous[T any, K comparable] struct {
	key  func(T) K
	seed maphash.Seed
}

func (r *rendezvous[T, K]) place(job T, n int, up func(int) bool) int {
	h := maphash.Comparable(r.seed, r.key(job))
	best, bestScore := -1, uint64(0)
	for w := range n {
		if !up(w) {
			continue // its keys move to the next highest: others stay
		}
		if s := mix(h ^ uint64(w+1)*0x9e3779b97f4a7c15); best < 0 || s > bestScore {
			best, bestScore = w, s
		}
	}
	return best
}

func (r *rendezvous[T, K]) flows() keyFlows[T] { return newKeyFlows(r.key) }

// mix is splitmix64's finalizer: a bijection that spreads every input bit.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
