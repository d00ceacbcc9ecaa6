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
//	type             bound  order                   cost        use it for
//	Unbounded        no     FIFO                    ~10 ns      the default: any traffic, shallow or deep
//	Segmented        no     FIFO                    ~11-16 ns   deep or bursty fan-in, large messages: never copies to grow
//	Bounded          yes    FIFO                    ~11-19 ns   a hard memory limit: Fail, DropNewest, DropOldest or Backpressure
//	Chan             yes    FIFO                    ~60 ns      a plain buffered channel behind the interface; a baseline
//	Fair             no     round robin per key,    ~55 ns      many senders (tenants, sessions) sharing one consumer
//	                        FIFO within a key
//	Priority         opt.   by less; ties any       O(log n)    urgent messages first (~18 ns at depth 1, ~230 ns deep)
//	StablePriority   opt.   by less; ties FIFO      O(log n)    urgent first, arrival order among equals
//
// The cost is one message from a producer goroutine to a consumer goroutine
// that is woken through a channel when it finds the mailbox empty, as an
// actor is (BenchmarkMailbox/1P1C and the mailbox scenario of the bench/
// program, medians on a 2-core AMD EPYC); a buffered channel moves a
// message in ~40 ns there. With four producers, Unbounded, Segmented and
// Bounded cost ~24-26 ns against ~36 ns. Bounded costs ~11 ns
// with room to spare and ~19 ns when Backpressure keeps parking a faster
// producer. Unbounded, Segmented and Bounded take separate producer and
// consumer locks, so a producer and a consumer do not contend; Chan, Fair
// and Priority have one lock. Enqueue and Dequeue are O(1) (Unbounded's
// amortized) but for Priority's O(log n), n = Len().
//
// None of them allocates per message in steady traffic: Unbounded's ring,
// Priority's heap and Segmented's segments are recycled through a
// process-wide pool per element type, which the garbage collector empties
// when it goes unused, and a drained Unbounded or Segmented mailbox keeps at
// most 64 slots. Len takes no lock: it reads atomic counters and returns the
// exact count at one instant during the call.
//
// # Actors
//
// Spawn starts an actor: one goroutine that drains its own mailbox, calling
// the handler for one message at a time with the actor's context. It waits
// on a signal channel of capacity 1, which Tell pokes without blocking, as do
// Stop and the end of its context (through context.AfterFunc): no pump
// goroutine and no allocation per message. With an empty handler a message costs about 50 ns end to end, as
// much as through a bare goroutine and buffered channel, which has no dead
// letters, no Len and no panic recovery (BenchmarkActorTell). Forward feeds
// an actor, or a router, from a channel the caller already has.
//
// A panic in a handler is recovered with its stack and reported, with the
// handler's errors, to WithErrorHandler; the actor goes on. Stop, or the end
// of the actor's context, stops it at once: Tell refuses, the mailbox is
// closed (waking blocked senders), and the message being handled finishes. A
// message that will never reach the handler (refused by a full mailbox,
// evicted, told to a stopped actor, left queued when it stopped) is a
// DeadLetter: counted (Ref.DeadLetters) and sent to WithDeadLetters, or else
// logged sparingly.
//
// # Choosing a router
//
// A Router sends each message to one of its actors as its Strategy picks
// (NewRouter over actors you spawned, SpawnRouter to spawn them), or to all
// of them with Broadcast. Stopped routees are skipped, never sent to.
//
//	strategy         wins when                          cost per message        failure mode
//	RoundRobin       jobs take the same time            1 atomic add (~5 ns)    a slow job delays every job queued behind it
//	Random           the same, with no shared counter   1 random draw (~12 ns)  as RoundRobin, plus uneven queues by chance
//	SmallestMailbox  job times vary; up to ~16 routees  1 atomic load per       O(n): 2-4 ns per busy routee
//	                                                    routee, stops at the    (150-260 ns for 64); wakes an
//	                                                    first idle one          idle routee rather than batching
//	SmallestOfTwo    job times vary; many routees       2 random draws and      slightly less even than the full
//	                                                    2 loads (~20 ns)        scan; O(1) whatever n
//	Broadcast        every routee must see the message  one Tell per routee     n times the work; not a strategy
//	WithKey          jobs of one key (account, device,   a lock, a map lookup;   per-key order; a key's jobs wait
//	(pools, Spawn-   tenant) must run in order; keys     a scan of the workers   for each other, so a hot key is
//	Router)          vary in load                        for a new key           one worker's work
//	WithConsistent-  per-worker caches: a key must keep  one hash per worker     ignores load: a hot key or an
//	Hash (same)      its worker across calls                                     unlucky spread leaves a queue
//
// SmallestMailbox scores a routee by its queued messages plus 1 while it is
// busy. An idle routee with an empty mailbox wins at once; otherwise the
// lowest score wins, with ties rotating; full bounded routees are skipped
// unless all are full (then round robin, so the message meets that routee's
// overflow policy); a routee whose depth is unknown ranks last instead of
// winning. A Picker applies any of these strategies to routees that are not
// actors.
//
// A typed pool, or a router from SpawnRouter, can also route by key.
// WithKey keeps each key's jobs in
// submission order, never two at once: a key with jobs queued or running is
// bound to one worker; a key with none is bound to no worker, and its next
// job goes to the worker with the fewest keys bound plus jobs held (ties
// rotate), so a hot key or an unlucky key does not bury a worker that
// hashing would keep choosing. The key table holds only active keys.
// WithConsistentHash is the classic alternative (rendezvous hashing): the
// same key always goes to the same live worker, whatever the load.
//
// Bounded's overflow policies:
//
//	Fail          reject the new message with ErrMailboxFull: the caller decides
//	DropNewest    discard the new message, Enqueue returns ErrDropped: older data matters more
//	DropOldest    evict the oldest to the drop hook, accept the new: the latest data supersedes
//	Backpressure  block the sender until room, ctx done or Close; senders served in arrival order
//
// # Pools
//
// A Pool is a router that owns its workers and replaces an errgroup
// fan-out (Submit where errgroup has Go, Wait where it has Wait):
//
//	p, ctx := crew.WithContext(ctx, 8) // 8 workers, smallest-mailbox dispatch
//	for _, u := range urls {
//		if err := p.Submit(ctx, func(ctx context.Context) error { return fetch(ctx, u) }); err != nil {
//			break // ctx ended, or a job failed and canceled ctx
//		}
//	}
//	err := p.Wait() // the first error, as errgroup's Wait
//
// Submit sends each job to the worker the strategy picks (SmallestMailbox
// by default) and returns without waiting for it. By default each worker
// holds at most DefaultQueueSize jobs waiting beside the one it runs
// (WithQueueSize changes it): Submit blocks only while every worker is that
// full, honours its ctx while it does, and takes the first room that opens
// in any worker, in arrival order. A worker that runs out of jobs takes the
// jobs queued behind busy workers before it sleeps; with SmallestMailbox,
// which sends each job to an idle worker when there is one, a slow job
// never holds up the jobs behind it while another worker is idle.
//
// Wait closes the pool to new jobs, runs every job already accepted, stops
// the workers (no goroutine is left behind) and returns the first error, or
// all of them with WithAllErrors. A panic in a job is recovered with its
// stack and returned by Wait as an error that errors.As unwraps to
// *panics.ErrRecovered; the worker goes on. WithContext (or
// WithCancelOnError) cancels the pool's context on the first error, with
// that error as its cause: jobs still queued are then skipped and counted
// (Stats), not run, and Submit refuses new ones.
//
// A job may submit more jobs to its own pool, passing the context it
// received: when the pool is full, such a Submit runs the new job inline
// instead of blocking, so recursive fan-outs cannot deadlock the pool, and
// Wait waits for them too. Map runs a function over a slice and returns the
// results in input order. Stats reports what every worker queued and ran.
// Worker goroutines carry the pprof labels crew.pool and crew.worker.
//
//	pool                         jobs             bound                   use it for
//	NewGroup(n)                  func(ctx) error  n*(1+DefaultQueueSize)  errgroup.Group with SetLimit(n)
//	WithContext(ctx, n)          func(ctx) error  the same                errgroup.WithContext: the first error cancels
//	NewPool(n, handle)           any T            the same                typed jobs, one handler
//	NewPool(.., WithMailbox(f))  any T            the mailbox's own       priority or fair-per-key pools
//	Map(ctx, n, inputs, f)       inputs[i]        n*(1+DefaultQueueSize)  ordered results, one call per input
//
// A no-op job costs about 110 ns through a pool of 8 workers fed by one
// goroutine, and 150 ns fed by 8, on a 2-core AMD EPYC (BenchmarkPool,
// medians of 10 interleaved runs), with no allocation: 2.1-2.2x a
// hand-written pool of goroutines reading one channel (50 and 70 ns), which
// has no error handling, no panic recovery and no balance for uneven jobs,
// and 2.3-2.8x faster than errgroup with SetLimit (310 and 340 ns, 2
// allocations per job). RoundRobin saves the scan: about 95-105 ns. The
// bench/ program's overhead scenario (same machine) puts conc's pool at
// 2-3x crew's cost and ants (1 allocation per job) and pond (6) at 4-6x.
// With uneven jobs (95% 2 ms, 5% 100 ms) a burst finishes as fast as
// through one shared queue, and a stream at 80% load sees a p99 within a
// few percent of it; at 90% load the p99 is ~1.15x a shared queue's
// (bench/results).
package crew
