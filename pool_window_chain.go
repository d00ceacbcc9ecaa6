package crew

import "sync/atomic"

// The places of an ordered stream's window (MapSeq's inputs, a Stream's
// tasks), in a chain of chunks made as the stream first needs them.

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
