// Package crew provides mailboxes, actors, routers and worker pools for Go
// programs that have outgrown a hand-written worker pool or an errgroup
// fan-out.
//
// The building block is the [Mailbox]: a queue that producers fill with
// Enqueue and a consumer drains with a non-blocking Dequeue. An actor (a
// goroutine woken through a channel when its mailbox gains a message) drains
// one; a router picks which actor gets each message; a pool is a router that
// owns its workers. Every mailbox keeps an exact O(1) Len, which is what lets
// a router send each message to the least loaded actor.
//
// # Mailbox semantics
//
// All mailboxes are safe for concurrent use by any number of producers and
// consumers, like a channel. Enqueue returns nil when the message was
// accepted. A bounded mailbox that is full returns [ErrMailboxFull] (or an
// error wrapping it), or blocks, as its [Overflow] policy says. After Close,
// Enqueue returns [ErrMailboxClosed], Dequeue reports ok == false, and Close
// has returned everything still queued, in the order Dequeue would have.
//
// Nothing is lost silently. A message is either returned by Dequeue or
// Close, or given back to its sender as an error from Enqueue (Fail,
// DropNewest, a closed mailbox, a canceled context), or, when a DropOldest
// mailbox evicts it, handed to the hook its owner installed through
// [Dropper]. Each path keeps Len exact.
//
// Programmer errors, such as a capacity below 1 or a nil key or less
// function, panic with a message that starts with "crew:".
//
// # Choosing a mailbox
//
//	type                     bound    order                  cost per message        use it for
//	Unbounded                no       FIFO                   ~13 ns, amortized O(1)  the default: shallow queues, any traffic
//	Segmented                no       FIFO                   ~22 ns, O(1)            deep or bursty fan-in, large messages: never copies to grow
//	Bounded                  yes      FIFO                   ~13 ns, O(1)            a hard memory limit, with Fail, DropNewest, DropOldest or Backpressure
//	Chan                     yes      FIFO                   ~37 ns, O(1)            a plain buffered channel behind the interface; a baseline
//	Fair                     no       round robin per key,   ~55 ns, O(1) + map      many senders (tenants, sessions) sharing one consumer
//	                                  FIFO within a key
//	Priority                 opt.     by less; ties any      ~19 ns, O(log n)        urgent messages first
//	StablePriority           opt.     by less; ties FIFO     ~19 ns, O(log n)        urgent first, arrival order among equals
//
// The costs are one Enqueue plus one Dequeue on one goroutine at depth 0
// (BenchmarkMailboxRoundTrip on a 2-core AMD EPYC; a buffered channel's send
// plus receive takes ~23 ns there); Priority's grow with log n. None of them
// allocates per message in steady traffic: Unbounded and Segmented recycle
// their buffers and segments through a process-wide pool per element type,
// and a drained Unbounded or Segmented mailbox keeps at most 64 slots.
// Between goroutines, one producer and one consumer woken through a channel
// (BenchmarkMailbox/1P1C), a message costs ~22-26 ns through Unbounded,
// Segmented and Bounded, against ~33 ns through a buffered channel.
//
// Bounded's overflow policies:
//
//	Fail          reject the new message with ErrMailboxFull: the caller decides
//	DropNewest    discard the new message, Enqueue returns ErrDropped: older data matters more
//	DropOldest    evict the oldest to the drop hook, accept the new: the latest data supersedes
//	Backpressure  block the sender until room, ctx done or Close; senders served in arrival order
package crew
