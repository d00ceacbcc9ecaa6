package crew

import (
	"context"
	"sync/atomic"
)

// A parcel is a keyed router's message in a routee's mailbox, with the
// record of its key when it holds one of its key's turns (it came through
// the router's Tell), so that its end, however it comes, releases that
// turn and no other. A Broadcast's copy, or a message told to the routee
// directly, has no key.
type parcel[T any] struct {
	msg T
	key *routerKey[T]
}

// A routeeBox is the mailbox of a keyed router's routee: an Unbounded of
// parcels. Each parcel carries its key to whichever of its two ends comes:
// the handler (the routee's goroutine takes it with Dequeue) or the dead
// letters (shutdown takes it with seal). The key is never looked up in a
// second, parallel record, which the two ends would race to pop.
//
// Dequeue is called only by the routee's goroutine, which then calls the
// handler, on the same goroutine, for the message it returned: taken hands
// the parcel's key from one to the other.
type routeeBox[T any] struct {
	q     *Unbounded[parcel[T]]
	taken *routerKey[T]                  // the key of the message Dequeue returned last; the routee's goroutine's
	ended func(key *routerKey[T], msg T) // the router's: a message of key has ended
	waits func() bool                    // the router's, for this routee: see linger
}

func newRouteeBox[T any](ended func(*routerKey[T], T)) *routeeBox[T] {
	return &routeeBox[T]{q: NewUnbounded[parcel[T]](), ended: ended}
}

// Enqueue queues msg with no key: a Broadcast's copy, or a Tell to the
// routee itself.
func (b *routeeBox[T]) Enqueue(ctx context.Context, msg T) error {
	return b.q.Enqueue(ctx, parcel[T]{msg: msg})
}

// put queues msg, which holds a turn of key.
func (b *routeeBox[T]) put(msg T, key *routerKey[T]) error {
	return b.q.Enqueue(context.Background(), parcel[T]{msg: msg, key: key})
}

// Dequeue returns the next message and keeps its key in taken.
func (b *routeeBox[T]) Dequeue() (T, bool) {
	p, ok := b.q.Dequeue()
	b.taken = p.key
	return p.msg, ok
}

// take returns the key of the message Dequeue returned last, for its
// handler, which must release it once it returns.
func (b *routeeBox[T]) take() *routerKey[T] {
	key := b.taken
	b.taken = nil
	return key
}

func (b *routeeBox[T]) Len() int { return b.q.Len() }

// linger is lingerer's: the routee waits while its draining router holds
// messages for it.
func (b *routeeBox[T]) linger() bool { return b.waits() }

func (b *routeeBox[T]) counters() (in, out *atomic.Uint64) { return b.q.counters() }

// seal closes the mailbox and hands each message still queued, in order,
// to dead, then releases its key: a message's dead letter happens before
// the next message of its key starts.
func (b *routeeBox[T]) seal(dead func(T)) {
	for _, p := range b.q.Close() {
		dead(p.msg)
		if p.key != nil {
			b.ended(p.key, p.msg)
		}
	}
}

// Close closes the mailbox and returns the messages still queued,
// releasing their keys: the actor seals it instead.
func (b *routeeBox[T]) Close() []T {
	var rest []T
	b.seal(func(msg T) { rest = append(rest, msg) })
	return rest
}
