// Package keys is the per-key bookkeeping that crew's keyed pools and
// keyed routers share (WithKey, WithConsistentHash): an Index that gives
// each key with work a slot, for the caller's per-key queue, and a Pin that
// maps a key to one of n workers by rendezvous hashing. Neither is safe for
// concurrent use: the caller guards it with its lock.
package keys

import (
	"hash/maphash"
)

// An Index gives each key with work a slot, numbered from 0, which the
// caller uses to find the key's queue in a table of its own: a slot
// released is handed to a later key, so the table never holds more entries
// than the most keys with work at once. An Index reads a job's key once,
// in Slot, and keeps it until Release: reading it again there would find
// whatever the job made of it.
type Index[T any] interface {
	// Slot returns the slot of job's key, and whether the key had none and
	// was given it now (fresh). A slot never handed out before is the
	// number of slots handed out so far (a Table relies on it). It panics,
	// taking nothing, if the key function panics or returns a key that
	// equals no key (a NaN).
	Slot(job T) (slot int, fresh bool)
	// Release frees slot and forgets its key.
	Release(slot int)
	// Each calls visit with each slot in use; visit may release it.
	Each(visit func(slot int))
	// Len reports the keys with a slot.
	Len() int
}

// NewIndex returns an empty Index of the keys that key reads.
func NewIndex[T any, K comparable](key func(T) K) Index[T] {
	return &index[T, K]{key: key, m: make(map[K]int)}
}

type index[T any, K comparable] struct {
	key  func(T) K
	m    map[K]int
	keys []K   // each slot's key; a released slot holds the zero K
	free []int // released slots, handed out again first
}

func (x *index[T, K]) Slot(job T) (int, bool) {
	k := x.key(job)
	if k != k {
		// A NaN (or a key holding one) would never be found again: its
		// entry would stay, and its jobs would not keep their order.
		panic("crew: WithKey: the key function returned a key that equals no key (NaN)")
	}
	if s, ok := x.m[k]; ok {
		return s, false
	}
	var s int
	if n := len(x.free); n > 0 {
		s, x.free = x.free[n-1], x.free[:n-1]
		x.keys[s] = k
	} else {
		s = len(x.keys)
		x.keys = append(x.keys, k)
	}
	x.m[k] = s
	return s, true
}

func (x *index[T, K]) Release(s int) {
	var zero K
	delete(x.m, x.keys[s])
	x.keys[s] = zero // holds nothing the key pointed to
	x.free = append(x.free, s)
}

func (x *index[T, K]) Each(visit func(int)) {
	for _, s := range x.m {
		visit(s)
	}
}

func (x *index[T, K]) Len() int { return len(x.m) }

// A Pin maps each job to the worker its key is pinned to
// (WithConsistentHash).
type Pin[T any] interface {
	// Place returns the worker among n for job, the one whose score for
	// its key is highest among those up reports live, or -1 if none is.
	Place(job T, n int, up func(int) bool) int
	// Hash returns the hash of job's key that Place ranks the workers by;
	// PlaceHash places a key by it, without reading a job's key again.
	Hash(job T) uint64
	PlaceHash(h uint64, n int, up func(int) bool) int
	// Index returns a new Index over the same keys, in which a router
	// keeps each key's messages out and those waiting behind them.
	Index() Index[T]
}

// NewPin returns the Pin of the keys that key reads, by rendezvous
// hashing with a seed of its own.
func NewPin[T any, K comparable](key func(T) K) Pin[T] {
	return &rendezvous[T, K]{key: key, seed: maphash.MakeSeed()}
}

// rendezvous is WithConsistentHash's pin: the highest of hash(key,
// worker) wins, so that a key keeps its worker while it lives, and only
// the keys of a worker that goes move.
type rendezvous[T any, K comparable] struct {
	key  func(T) K
	seed maphash.Seed
}

func (r *rendezvous[T, K]) Place(job T, n int, up func(int) bool) int {
	return r.PlaceHash(r.Hash(job), n, up)
}

func (r *rendezvous[T, K]) Hash(job T) uint64 { return maphash.Comparable(r.seed, r.key(job)) }

func (r *rendezvous[T, K]) PlaceHash(h uint64, n int, up func(int) bool) int {
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

func (r *rendezvous[T, K]) Index() Index[T] { return NewIndex(r.key) }

// mix is splitmix64's finalizer: a bijection that spreads every input bit.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
