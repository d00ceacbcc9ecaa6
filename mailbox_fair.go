package crew

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/crewlib/crew/internal/queue"
)

// A Fair is an unbounded mailbox that keeps one FIFO sub-queue per key and
// serves the keys round robin: Dequeue takes one message from the key whose
// turn it is, then that key goes to the back of the line. A chatty key
// therefore cannot starve quiet ones: with k keys waiting, a new key's first
// message is at most k-1 messages away. Messages of one key stay in the order
// they were enqueued.
//
// The key function runs on the sender's goroutine, outside the mailbox's
// lock. A key's sub-queue is created on its first message and dropped when it
// drains, so the mailbox holds memory only for keys with queued messages; the
// key table is rebuilt smaller once most of its keys have gone.
//
// Enqueue is O(1) plus one map lookup; Dequeue is O(1) plus a map delete when
// a key drains. Enqueue never blocks and never fails before Close.
//
// A Fair is safe for concurrent use. The zero value is not usable: create
// one with NewFair.
type Fair[T any, K comparable] struct {
	n   atomic.Int64 // queued messages; written under mu, read lock-free by Len
	key func(T) K

	mu     sync.Mutex                   // guards the fields below
	queues map[K]*fairQueue[T, K]       // sub-queues of the keys with messages
	turn   queue.Ring[*fairQueue[T, K]] // those sub-queues in serving order
	free   []*fairQueue[T, K]           // drained sub-queues kept for reuse
	peak   int                          // most keys in queues since it was made
	closed bool
}

// A fairQueue is the FIFO sub-queue of one key.
type fairQueue[T any, K comparable] struct {
	key K
	q   queue.Ring[T]
}

// keptFairQueues is how many drained sub-queues (each with a buffer of at
// most queue.KeptRingSlots) a Fair keeps for reuse by new keys.
const keptFairQueues = 16

// NewFair returns an empty Fair mailbox that groups messages by key(msg). It
// panics if key is nil.
func NewFair[T any, K comparable](key func(T) K) *Fair[T, K] {
	if key == nil {
		panic("crew: NewFair: nil key function")
	}
	return &Fair[T, K]{key: key, queues: make(map[K]*fairQueue[T, K])}
}

// Enqueue appends msg to its key's sub-queue; a key without queued messages
// joins the back of the serving order. It returns ErrMailboxClosed after
// Close and nil otherwise; it never blocks, so ctx is ignored. It panics if
// the key is not equal to itself (a floating-point NaN), since such a key
// could never be found again.
func (f *Fair[T, K]) Enqueue(_ context.Context, msg T) error {
	if f.key == nil {
		unmadeMailbox("Fair", "NewFair")
	}
	k := f.key(msg)
	if k != k {
		// A NaN: no map lookup or delete ever finds it again.
		panic("crew: Fair: the key function returned a key not equal to itself (NaN)")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return ErrMailboxClosed
	}
	fq := f.queues[k]
	if fq == nil {
		fq = f.newQueue(k)
		f.queues[k] = fq
		f.peak = max(f.peak, len(f.queues))
		f.turn.Push(fq)
	}
	fq.q.Push(msg)
	f.n.Add(1)
	return nil
}

func (f *Fair[T, K]) newQueue(k K) *fairQueue[T, K] {
	if n := len(f.free); n > 0 {
		fq := f.free[n-1]
		f.free[n-1] = nil
		f.free = f.free[:n-1]
		fq.key = k
		return fq
	}
	return &fairQueue[T, K]{key: k}
}

// Dequeue removes and returns the oldest message of the key whose turn it
// is, or ok == false when the mailbox is empty or closed.
func (f *Fair[T, K]) Dequeue() (msg T, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fq, ok := f.turn.Pop()
	if !ok {
		return msg, false
	}
	msg, _ = fq.q.Pop()
	f.n.Add(-1)
	if fq.q.Len() > 0 {
		f.turn.Push(fq)
	} else {
		f.retire(fq)
	}
	return msg, true
}

// retire forgets a drained key. A map never shrinks as keys are deleted, so
// once three quarters of the keys it grew to have gone (and it grew past a
// small size), the live keys move to a new map: O(live keys), paid for by the
// deletes since the last rebuild, which keeps the cost O(1) amortized.
func (f *Fair[T, K]) retire(fq *fairQueue[T, K]) {
	delete(f.queues, fq.key)
	var zero K
	fq.key = zero
	if len(f.free) < keptFairQueues {
		f.free = append(f.free, fq)
	}
	if live := len(f.queues); f.peak > queue.KeptRingSlots && live <= f.peak/4 {
		queues := make(map[K]*fairQueue[T, K], live)
		for k, q := range f.queues {
			queues[k] = q
		}
		f.queues, f.peak = queues, live
	}
}

// Len reports the number of queued messages, over all keys.
func (f *Fair[T, K]) Len() int { return int(f.n.Load()) }

// Keys reports how many keys have queued messages, and so hold a sub-queue.
func (f *Fair[T, K]) Keys() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queues)
}

// Close disposes of the mailbox and returns the queued messages in the order
// Dequeue would have returned them (round robin over keys, FIFO per key).
// Later calls return nil.
func (f *Fair[T, K]) Close() []T {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	var rest []T
	if n := f.n.Load(); n > 0 {
		rest = make([]T, 0, n)
	}
	for {
		fq, ok := f.turn.Pop()
		if !ok {
			break
		}
		msg, _ := fq.q.Pop()
		rest = append(rest, msg)
		if fq.q.Len() > 0 {
			f.turn.Push(fq)
		}
	}
	f.queues, f.free, f.turn = nil, nil, queue.Ring[*fairQueue[T, K]]{}
	f.n.Store(0)
	return rest
}
