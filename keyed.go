package crew

import (
	"fmt"

	"github.com/crewlib/crew/internal/keys"
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
		o.keyed, o.pinned = func() any { return keys.NewIndex(key) }, false
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
// idle, so prefer WithKey unless a key must stay on one worker (the
// benchmark report's advice "keyed" checks this on your machine). It costs one hash of the key and one per worker; a router also
// looks the key up in its table of busy keys, as WithKey does. Like
// WithKey, it takes the default backlog.
func WithConsistentHash[T any, K comparable](key func(T) K) Option {
	if key == nil {
		panic("crew: WithConsistentHash: nil key function")
	}
	return func(o *options) {
		o.set |= optKey
		o.keyed, o.pinned = func() any { return keys.NewPin(key) }, true
	}
}

// keyedFor makes the keyed dispatch WithKey or WithConsistentHash asked
// for, for a pool or router (owner) whose jobs or messages (noun) are T: an
// index of the keys with work, or a pin.
func keyedFor[T any](o *options, owner, noun string) (keys.Index[T], keys.Pin[T]) {
	if o.newMailbox != nil {
		panic("crew: WithKey and WithConsistentHash need the " + owner + "'s own mailbox: drop WithMailbox")
	}
	switch k := o.keyed().(type) {
	case keys.Index[T]:
		return k, nil
	case keys.Pin[T]:
		return nil, k
	}
	panic(fmt.Sprintf("crew: WithKey or WithConsistentHash: the key function does not take %T %s", *new(T), noun))
}
