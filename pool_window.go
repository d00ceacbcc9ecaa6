package crew

import (
	"context"
	"strconv"
	"sync/atomic"
)

// The window of an ordered stream, and what else MapSeq's and a Stream's
// forms share: their options, and the dead-letter sinks of their batches.

// DefaultWindowPerWorker is how many inputs (MapSeq, MapSeqBatch) or tasks
// (a Stream) per worker an ordered stream holds whose results it has not
// delivered yet, unless WithWindow sets its window.
const DefaultWindowPerWorker = 4

// WithWindow sets an ordered stream's window (MapSeq, MapSeqBatch,
// NewStream, NewStreamBatch) to n: the stream holds at most n inputs, or
// tasks, whose results it has not delivered yet, the oldest included. A
// slow input therefore holds back at most n inputs' worth of results and
// memory, and the workers idle once n inputs are done or running behind
// it. A larger window lets more quick inputs run behind a slow one; 1 runs
// the inputs one at a time. A Stream's Submit that found the window full
// waits until a quarter of it is free (see Stream.Submit). By default the
// window is DefaultWindowPerWorker times the workers (for a stream on a
// batch made WithLimit, times its limit if that is fewer). It panics if n
// is less than 1.
// It is not WithFairWindow, a fair pool's setting.
//
// The window is a bound, not an allocation: a stream makes its places
// as it first needs them, in runs of up to 256, and a run its head has
// left serves its tail again, so a stream holds memory for the inputs it
// holds (and a run spare), however large n is. A window of up to 256 is
// made whole as the stream starts.
func WithWindow(n int) Option {
	if n < 1 {
		panic("crew: WithWindow: n must be at least 1, got " + strconv.Itoa(n))
	}
	return func(o *options) { o.set |= optWindow; o.window = n }
}

// The options an ordered stream takes: those of its own pool, for MapSeq
// and NewStream, or of its batch, for MapSeqBatch and NewStreamBatch,
// which do not take a dead-letter sink (the stream reports, in order,
// where it stopped), nor WithAllErrors (it stops at its first error).
const (
	streamPoolOpts  = optName | optStrategy | optErrorHandler | optNoRecovery | optMetrics | optWindow
	streamBatchOpts = optLimit | optTenant | optWeight | optWindow
)

// windowOf is an ordered stream's window, given its options and its
// pool's workers.
func windowOf(o *options, workers int) int {
	switch {
	case o.set&optWindow != 0:
		return o.window
	case o.limit > 0:
		workers = min(workers, o.limit) // a batch never runs more jobs at once than its pool has workers
	}
	return DefaultWindowPerWorker * max(workers, 1)
}

// ownPool starts the pool of an ordered stream of its own (MapSeq,
// NewStream), given the stream's options, whose context derives from
// parent: no more workers than the window, and a bound that holds the
// whole window, so that the stream's Submits never wait for room in it.
func ownPool(o options, parent context.Context, workers, window int) *Pool[Job] {
	o.parent, o.cancelOnError, o.deadLetters = parent, true, discard
	o.set |= optQueueSize
	o.queueSize = (window-1)/workers + 1 // window/workers, rounded up, with no overflow
	return newGroup(min(workers, window), &o)
}

// discard is the dead-letter sink of the inputs an ordered stream on a
// pool of its own skipped: the stream reports where it stopped, and a
// loop that breaks out meant to skip the rest.
func discard(DeadLetter) {}

// stopOn returns the dead-letter sink of an ordered stream that is a batch
// of a shared pool: the pool skips the batch's queued jobs when its own
// context ends, without canceling the batch, and the stream would wait
// for them for ever. The sink stops the stream
// with the reason, which its loop, or its Submits, then report.
func stopOn(stop context.CancelCauseFunc) func(DeadLetter) {
	return func(d DeadLetter) { stop(d.Reason) }
}

// A window's slots are made as the stream first needs them, in chunks of
// at most chunkSlots: a window is a bound, not an allocation. A window of
// at most chunkSlots is one chunk, made at once and linked to itself (a
// ring); a larger one is a chain of chunks, each linked in as the tail
// reaches it and set aside as the head leaves it, so that the stream holds
// memory for the slots it holds, and one spare chunk.
const chunkSlots = 256

// A chain holds the slots of an ordered stream's window, S being the
// stream's slot type, in chunks: its tail, where the next input or task
// goes, moves on as items are taken, and its head, the oldest not yet
// delivered, as they are delivered. A slot never moves while the stream
// runs: a job keeps a pointer to its own.
type chain[S any] struct {
	size  int                      // the slots of a chunk
	ring  bool                     // one chunk, linked to itself: nothing is set aside
	bind  func(*S)                 // readies a slot of a chunk as it is made
	spare atomic.Pointer[chunk[S]] // the chunk the head left last, for the tail: a stream that goes on makes none
}

// A chunk is a run of a chain's slots.
type chunk[S any] struct {
	slots []S
	next  *chunk[S] // linked by the tail before the last slot is filled (see fill); cleared as the head leaves
}

// A place is where a chain's tail or head is.
type place[S any] struct {
	c *chunk[S]
	i int
}

// newChain makes the chain of a window of n slots, each readied by bind,
// and returns it with the place of its first slot, where the tail and the
// head begin.
func newChain[S any](n int, bind func(*S)) (*chain[S], place[S]) {
	ch := &chain[S]{size: min(n, chunkSlots), ring: n <= chunkSlots, bind: bind}
	c := ch.make()
	if ch.ring {
		c.next = c
	}
	return ch, place[S]{c: c}
}

// make makes a chunk.
func (ch *chain[S]) make() *chunk[S] {
	c := &chunk[S]{slots: make([]S, ch.size)}
	for i := range c.slots {
		ch.bind(&c.slots[i])
	}
	return c
}

// at returns the slot at p.
func (ch *chain[S]) at(p place[S]) *S { return &p.c.slots[p.i] }

// fill returns the slot at the tail, p, for an item, and the place after
// it, where the tail moves once the item is taken. For the last slot of a
// chunk, it first links the chunk after (see link). It is small enough to
// inline: the rest is link's.
func (ch *chain[S]) fill(p place[S]) (slot *S, after place[S]) {
	if p.i+1 < ch.size {
		return &p.c.slots[p.i], place[S]{c: p.c, i: p.i + 1}
	}
	return ch.link(p)
}

// link is fill for the last slot of a chunk: it links the chunk after,
// which the head moves on to once it delivered that item (the item's
// hand-off to its job publishes the link), and returns the slot and the
// first place of that chunk. The tail must not read the link again once
// its item is handed off: the head clears it as it leaves the chunk.
func (ch *chain[S]) link(p place[S]) (slot *S, after place[S]) {
	if p.c.next == nil {
		c := ch.spare.Swap(nil)
		if c == nil {
			c = ch.make()
		}
		p.c.next = c
	}
	return &p.c.slots[p.i], place[S]{c: p.c.next}
}

// pass moves p, the head, past the slot it delivered. It is small enough
// to inline: leaving a chunk is leave's.
func (ch *chain[S]) pass(p *place[S]) {
	if p.i++; p.i == ch.size {
		ch.leave(p)
	}
}

// leave moves p, the head, from the chunk it passed the last slot of to
// the next, and sets the chunk it left aside as the spare: every slot of
// it was delivered, and the tail is past it.
func (ch *chain[S]) leave(p *place[S]) {
	c := p.c
	p.c, p.i = c.next, 0
	if !ch.ring {
		c.next = nil
		ch.spare.Store(c)
	}
}
