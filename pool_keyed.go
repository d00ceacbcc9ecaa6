package crew

import (
	"fmt"
	"hash/maphash"
	"sync/atomic"
)

// WithKey makes a typed pool keep the jobs of each key in order: jobs with
// the same key run one after another, in the order they were submitted
// (the order in which their Submits took the pool's key lock), never two at
// once, while jobs of different keys run in parallel. key must return the
// same key for a job every time it is called.
//
// Placement is load-aware. A key with no job queued or running is bound to
// no worker; its next job goes to the worker with the lowest load, counted
// as the keys bound to it plus the jobs it holds (queued, and the one
// running), scanning from a start that moves with every new key, so that
// ties rotate and a fresh pool places keys round robin. The key stays bound
// while it has jobs queued or running and is released when the last one
// ends: the key table holds only active keys. A hot key loads one worker,
// and new keys go elsewhere.
//
// Binding and release cost O(1) amortized under one lock, plus a scan of
// the workers for a new key; no allocation per job in steady traffic. A
// keyed pool keeps its workers from taking each other's jobs, and a job's
// own Submit on a full keyed pool is queued beyond the bound instead of run
// inline, since either would break the order. A keyed pool does not bound
// its queues unless WithQueueSize(n) is given, which caps the pool as a
// whole at workers×(1+n) jobs: since a key's jobs wait for each other, a
// bound lets a hot key's backlog block every Submit, other keys' too. It takes the pool's default
// mailbox: NewPool panics if WithMailbox is given too. WithKey applies to
// NewPool and SpawnRouter (T must be their message type; see
// SpawnRouter); see WithConsistentHash for a fixed key-to-worker mapping.
func WithKey[T any, K comparable](key func(T) K) Option {
	if key == nil {
		panic("crew: WithKey: nil key function")
	}
	return func(o *options) {
		o.keyed = func(n int) any { return newKeyTable(key, n) }
	}
}

// WithConsistentHash makes a typed pool send every job of a key to the same
// worker, chosen by rendezvous hashing of the key over the live workers
// (the highest of hash(key, worker)), so that a key keeps its worker across
// calls and runs: what per-worker caches need. Jobs of one key run in
// submission order, one at a time. Unlike WithKey it ignores load: a hot
// key, or an unlucky spread of keys, leaves one worker with a queue while
// others idle. It costs one hash of the key and one per worker. Like WithKey,
// it switches off the workers' taking each other's jobs and panics with
// WithMailbox.
func WithConsistentHash[T any, K comparable](key func(T) K) Option {
	if key == nil {
		panic("crew: WithConsistentHash: nil key function")
	}
	return func(o *options) {
		o.keyed = func(int) any { return &rendezvous[T, K]{key: key, seed: maphash.MakeSeed()} }
	}
}

// keyerFor makes the placement WithKey or WithConsistentHash asked for, for
// the n workers of a pool or router (owner) whose jobs (noun) are T.
func keyerFor[T any](o *options, n int, owner, noun string) keyer[T] {
	if o.newMailbox != nil {
		panic("crew: WithKey and WithConsistentHash need the " + owner + "'s own mailbox: drop WithMailbox")
	}
	k, ok := o.keyed(n).(keyer[T])
	if !ok {
		panic(fmt.Sprintf("crew: WithKey or WithConsistentHash: the key function does not take %T %s", *new(T), noun))
	}
	return k
}

// A keyer places the jobs of a keyed pool.
type keyer[T any] interface {
	// place returns the worker among n for job, binding its key if needed,
	// or -1 if no worker is up; the pool's key lock is held. up reports
	// whether a worker takes jobs; score is its load.
	place(job T, n int, up func(int) bool, score func(int) int64) int
	// release counts one of job's key's jobs out; the key lock is held.
	release(job T)
	// active reports how many keys are bound.
	active() int
}

// keyTable is WithKey's placement: the active keys and where they are.
type keyTable[T any, K comparable] struct {
	key   func(T) K
	m     map[K]binding
	bound []int64 // keys bound to each worker
	next  int     // where the next scan starts
	n     atomic.Int64
}

// A binding is an active key's worker and its jobs queued or running.
type binding struct {
	worker int32
	jobs   int32
}

func newKeyTable[T any, K comparable](key func(T) K, workers int) *keyTable[T, K] {
	return &keyTable[T, K]{key: key, m: make(map[K]binding), bound: make([]int64, workers)}
}

func (t *keyTable[T, K]) place(job T, _ int, up func(int) bool, score func(int) int64) int {
	k := t.key(job)
	b, ok := t.m[k]
	if !ok {
		w := t.lightest(up, score)
		if w < 0 {
			return -1
		}
		b.worker = int32(w)
		t.bound[w]++
		t.n.Add(1)
	}
	b.jobs++
	t.m[k] = b
	return int(b.worker)
}

// lightest returns the live worker with the fewest keys bound plus jobs
// held, scanning from a start that moves with every call; -1 if none.
func (t *keyTable[T, K]) lightest(up func(int) bool, score func(int) int64) int {
	n := len(t.bound)
	start := t.next
	t.next++
	if t.next == n {
		t.next = 0
	}
	best, bestScore := -1, int64(0)
	for i := range n {
		w := start + i
		if w >= n {
			w -= n
		}
		if !up(w) {
			continue
		}
		if s := t.bound[w] + score(w); best < 0 || s < bestScore {
			best, bestScore = w, s
		}
	}
	return best
}

func (t *keyTable[T, K]) release(job T) {
	k := t.key(job)
	b, ok := t.m[k]
	if !ok {
		return // told to a routee directly, past its router: never bound
	}
	if b.jobs--; b.jobs > 0 {
		t.m[k] = b
		return
	}
	delete(t.m, k)
	t.bound[b.worker]--
	t.n.Add(-1)
}

func (t *keyTable[T, K]) active() int { return int(t.n.Load()) }

// rendezvous is WithConsistentHash's placement.
type rendezvous[T any, K comparable] struct {
	key  func(T) K
	seed maphash.Seed
}

func (r *rendezvous[T, K]) place(job T, n int, up func(int) bool, _ func(int) int64) int {
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

func (r *rendezvous[T, K]) release(T)   {}
func (r *rendezvous[T, K]) active() int { return 0 }

// mix is splitmix64's finalizer: a bijection that spreads every input bit.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
