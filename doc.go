// Package crew provides worker pools, actors, routers and mailboxes for Go
// programs that have outgrown a hand-written worker pool or an errgroup
// fan-out.
//
// # Start here
//
// Take the first of these that fits; most programs need only the first two.
//
//   - A pool in place of errgroup: [WithContext] (or [NewGroup]), then Submit
//     and Wait, or [Map] for results in input order. Use it wherever you
//     would use errgroup.Group with SetLimit: one fan-out, one Wait, which
//     closes the pool. See Pools. For a pipeline whose results go out in
//     input order as they become ready, with bounded memory, use [MapSeq]
//     (an iterator) or a [Stream] (callbacks). See Ordered streams.
//   - A long-lived pool: [NewGroup] (or [NewPool] for typed jobs) made once,
//     with one [Batch] per request ([Pool.NewBatch]); [WithLimit] caps how
//     many of a batch's jobs run at once, and [WithFairShare] shares the
//     workers fairly between batches or tenants. Use it when many requests
//     together must stay under one limit on some kind of work. See Choosing
//     a pool.
//   - Actors and routers: [Spawn] starts an actor, a goroutine that handles
//     the messages told to it one at a time; [SpawnRouter] spreads messages
//     over several. Use them for long-lived consumers of a stream of
//     messages, rather than a set of jobs to wait for. See Actors and
//     Choosing a router.
//   - Mailboxes: [NewUnbounded], [NewBounded] and the others, the queues an
//     actor drains and a pool's backlog is. Use one directly when you need a
//     queue with an exact Len, an overflow policy, fairness or priority, or
//     give one to a pool with [WithMailbox]. See Choosing a mailbox.
//
// # Words used here
//
//   - Backlog: a pool's queue of jobs accepted but not yet running.
//   - Inline: a job's Submit to its own full pool, with the context it
//     received, runs the new job itself rather than block, so nested
//     fan-outs cannot deadlock (a keyed pool queues it past its bound).
//   - Batch: one request's part of a long-lived pool, with its own Submit,
//     Wait, first error and context, as an errgroup has.
//   - Share, tenant: a pool made WithFairShare divides its workers between
//     shares: each batch is one, but batches made WithTenant(key) form one
//     share per tenant, weighed by WithWeight. A freed worker goes to a
//     share that was quiet lately and holds credit, else to the share that
//     has had the least run time per weight; a share holding fewer jobs
//     than the pool has workers is let in beyond the bound, by up to a job
//     per worker.
//   - Routee: one of the actors a router sends messages to, or any [Routee]
//     a [Picker] chooses between.
//   - Drain: stop taking messages, handle those queued, then exit
//     ([Ref.Drain], [Router.Drain]); Stop exits at once instead.
//   - Dead letter: a message that will never reach its handler
//     ([DeadLetter]).
//   - BalancingPool, PoisonPill: Akka's (the JVM actor toolkit's) names
//     for a pool whose workers share one backlog, and for a drain.
//
// # How the pieces fit
//
// The building block is the [Mailbox]: a queue that producers fill with
// Enqueue and a consumer drains with a non-blocking Dequeue. An actor (a
// goroutine woken through a channel when its mailbox gains a message) drains
// one; a router picks which actor gets each message; a pool is a set of
// worker actors that share one backlog. Every mailbox keeps an exact O(1)
// Len, which is what lets a router send each message to the least loaded
// actor.
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
//	Unbounded        no     FIFO                    0.26x       the default: one producer or a few, shallow or deep
//	Segmented        no     FIFO                    0.47x       fan-in (many producers: they take no lock), deep or bursty queues, large messages
//	Bounded          yes    FIFO                    0.57x       a hard memory limit: Fail, DropNewest, DropOldest or Backpressure
//	Chan             yes    FIFO                    1.49x       a plain buffered channel behind the interface; a baseline
//	Fair             no     round robin per key,    1.48x       many senders (tenants, sessions) sharing one consumer
//	                        FIFO within a key
//	Priority         opt.   by less; ties any       O(log n)    urgent messages first (4.3x)
//	StablePriority   opt.   by less; ties FIFO      O(log n)    urgent first, arrival order among equals (5.2x)
//
// The cost is the time of one message from a producer goroutine to a
// consumer goroutine that is woken through a channel when it finds the
// mailbox empty, as an actor is, over the time of one message through a
// buffered channel of 1024 (see Costs), with one producer. Under fan-in,
// four and eight producers, Segmented takes 0.44x and 0.48x, Unbounded
// 0.46x and 0.54x, and Bounded 0.80x and 0.60x; beside one CPU-bound
// process per CPU, Segmented 0.97x and 1.19x and Unbounded 1.06x and
// 0.90x. For fan-in choose Segmented: an Enqueue takes a ticket with one
// atomic increment and never waits for another producer, where
// Unbounded's and Bounded's producers share a lock. Its gain is a
// median, not a promise: with four and with eight producers on two CPUs
// the runs of the reference report disagreed (0.66x to 1.12x and 0.60x
// to 1.54x Unbounded's time, run by run), and beside CPU-bound processes
// the two trade places. Bounded costs more than Unbounded with one
// producer and with four, in every run. An actor told from many
// goroutines gains less from Segmented than its mailbox alone, at times
// nothing or less (in the reference run it cost more than on Unbounded
// with four and eight producers): its wake-ups and its handler cost as
// much (see Costs). Beside CPU-bound processes, with more processors
// than CPUs, Unbounded with one producer has cost as much as a buffered
// channel in some runs. The benchmark
// program's report checks each of this advice on the machine it runs on,
// in its section "The README's advice on this machine" (rows "fan-in",
// "default mailbox" and "bounded"): go -C bench run . -scenarios
// mailboxes,actors. Unbounded and Bounded take separate producer and
// consumer locks, so a producer and a consumer do not contend; Segmented's
// meet only when the consumer reaches a message still being written, and
// at the lock that links and recycles segments, once per 256 messages of a
// backlog, and moves a drained first segment back to its start, once per
// 16 to 32 messages of sparse traffic; Chan, Fair and Priority have one
// lock.
// Enqueue and Dequeue are O(1) (Unbounded's amortized) but for Priority's
// O(log n), n = Len().
//
// None of them allocates per message in steady traffic: Unbounded's ring,
// Priority's heap and Segmented's segments are recycled through a
// process-wide pool per element type, which the garbage collector empties
// when it goes unused. A backlog that outgrows the pool allocates: a
// Segmented one segment per 256 messages (0.002-0.003 per message in the
// fan-in runs above, whose producers outrun the consumer, each run after a
// collection), an Unbounded a ring twice as large. A drained Unbounded
// keeps at most 64 slots (8 after sparse traffic); a Segmented, once a
// Dequeue has found it empty, at most its first segment of 32 (464 bytes
// for ints), so that sparse traffic, an idle actor's, takes nothing from
// the pool. Len takes no lock: it reads atomic counters and returns the
// exact count at one instant during the call.
//
// Unbounded stays an actor's default, even where an actor on a Segmented
// mailbox costs as little or less (in some of the benchmark program's
// actor runs, at times with one producer), because of what the default
// pays for every actor: a drained Segmented keeps 32 slots where an Unbounded that
// carried sparse traffic keeps 8; a Segmented's Dequeue waits, spinning
// then yielding its processor, for a producer descheduled between its
// ticket and its write, where an Unbounded's consumer never waits for a
// producer; and a smallest-mailbox router reads an Unbounded's depth from
// its counters without a call. Give an actor that many goroutines tell at
// a high rate a Segmented with WithMailbox (see ExampleNewSegmented).
//
// # Actors
//
// Spawn starts an actor: one goroutine that drains its own mailbox, calling
// the handler for one message at a time with the actor's context. It waits
// on a signal channel of capacity 1, which Tell pokes without blocking
// (only while the actor is idle, on an Unbounded, Segmented or Bounded
// mailbox), as do Stop and the end of its context (through
// context.AfterFunc): no pump goroutine and no allocation per message; an
// idle actor costs its goroutine and 431 bytes (see Costs). Forward feeds
// an actor, or a router, from a channel the caller already has.
//
// A panic in a handler is recovered with its stack and reported, with the
// handler's errors, to WithErrorHandler; the actor goes on, as it does
// after a runtime.Goexit (reported as ErrGoexit) on a new goroutine. Stop,
// or the end of the actor's context, stops it at once: Tell refuses, the
// mailbox is closed (waking blocked senders), and the message being handled
// finishes. Drain stops it once it has handled what is queued (Akka's
// PoisonPill): Tell refuses at once; a keyed router's Drain handles the
// messages it holds behind their keys too. Done is closed once the actor's
// goroutine has exited; a Router's Done, once every routee's has. A message
// that will never reach the handler (refused by a full mailbox, evicted,
// told to a stopped actor or router, left queued when it stopped) is a
// DeadLetter: counted (Ref.DeadLetters; Router.DeadLetters adds up a
// router's own and its routees') and sent to WithDeadLetters, or else
// logged sparingly, per source. So every message told is handled, or
// refused with an error that says why and recorded as a dead letter, or,
// when a router has no routee left (ErrNoRoutee), handed back to the caller
// by that error: none is lost, none handled twice.
//
// # Choosing a router
//
// A Router sends each message to one of its actors as its Strategy picks
// (NewRouter over actors you spawned, SpawnRouter to spawn them), or to all
// of them with Broadcast. Stopped routees are skipped, never sent to.
//
//	strategy         wins when                          cost per message        failure mode
//	RoundRobin       jobs take the same time            1 atomic add            a slow job delays every job queued behind it
//	Random           the same, with no shared counter   1 random draw           as RoundRobin, plus uneven queues by chance
//	SmallestMailbox  job times vary; up to ~16 routees  3 atomic loads per      O(n) loads (BenchmarkPick); wakes
//	                                                    routee, stops at the    an idle routee rather than
//	                                                    first idle one          batching
//	SmallestOfTwo    job times vary; many routees       2 random draws and      slightly less even than the full
//	                                                    6 loads                 scan; O(1) whatever n
//	Broadcast        every routee must see the message  one Tell per routee     n times the work; not a strategy
//	WithKey          jobs of one key (account, device,   a map lookup under a    per-key order; a key's jobs wait
//	(pools, Spawn-   tenant) must run in order; keys     lock, per message and   for each other, so a hot key is
//	Router)          vary in load                        per message's end       one worker's work at a time
//	WithConsistent-  per-worker caches: a key must keep  one hash per worker;   ignores load: a hot key or an
//	Hash (same)      its worker across calls             plus WithKey's map      unlucky spread leaves a queue
//	                                                     lookups in a router
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
// WithKey keeps each key's jobs in submission order, never two at once: a
// key has at most one job dispatched (queued at a worker or running); its
// later jobs wait behind it, outside every worker, and the next is
// dispatched when it ends: a pool's to whichever worker is free, a
// router's to the routee its strategy picks then. So keys spread over the
// workers as they free, and a hot key or an unlucky one never buries a
// worker's queue, as hashing does. The key table holds only busy keys.
// WithConsistentHash is the classic alternative (rendezvous hashing): the
// same key always goes to the same live worker, whatever the load. A
// router's key moves off a routee that stops or drains only once its
// messages there have ended; those told meanwhile wait in the router, so
// a key's messages still run in order, one at a time.
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
// A Pool owns a fixed set of worker goroutines that share one backlog, and
// replaces an errgroup fan-out (Submit where errgroup has Go, Wait where it
// has Wait):
//
//	p, ctx := crew.WithContext(ctx, 8) // 8 workers
//	for _, u := range urls {
//		if err := p.Submit(ctx, func(ctx context.Context) error { return fetch(ctx, u) }); err != nil {
//			break // ctx ended, or a job failed and canceled ctx
//		}
//	}
//	err := p.Wait() // the first error, as errgroup's Wait
//
// Dispatch is work sharing with a smallest-mailbox hand-off, Akka's
// BalancingPool with SmallestMailbox's first rule. While the backlog is
// empty, Submit hands a job straight to an idle worker (WithStrategy picks
// which, when several are); otherwise the job joins the backlog, and every
// worker takes the oldest job from it before it goes idle. No job waits
// while a worker is idle, and jobs start in submission order: if a job has
// been dispatched, so has every job whose Submit returned before its Submit
// began. A dispatched job runs even if the pool's context ends first; the
// jobs still in the backlog then are skipped and counted (Stats), never
// reported as done. So, as with errgroup, a failure never skips a job
// submitted before the one that failed.
//
// The backlog is bounded: by default the pool holds at most
// workers×(1+DefaultQueueSize) jobs, counting those running, and Submit
// blocks while it is full, honouring its ctx; blocked Submits take the room
// that opens in the order they came (WithQueueSize changes the bound; with
// 0, errgroup's SetLimit bound, no job waits beside those running). The
// backlog is the pool's mailbox: WithMailbox makes it, so a priority
// mailbox orders the whole pool (an urgent job runs next on whichever
// worker frees first) and a Fair one shares the whole pool between keys.
// Such a pool is bounded by its mailbox unless WithQueueSize is given too;
// a full priority pool blocks an urgent Submit like any other.
//
// Wait closes the pool to new jobs, waits for every job accepted, stops the
// workers (no goroutine is left behind) and returns the first error, or all
// of them with WithAllErrors. A panic in a job is recovered with its stack
// and returned by Wait as an error that errors.As unwraps to
// *panics.ErrRecovered; the worker goes on, as it does on a new goroutine
// after a job's runtime.Goexit (ErrGoexit). WithContext (or
// WithCancelOnError) cancels the pool's context on the first error, with
// that error as its cause: jobs still in the backlog are skipped, Submit
// refuses new ones, and a Submit blocked on the full pool returns.
//
// A job may submit more jobs to its own pool, passing the context it
// received: when the pool is full, such a Submit runs the new job inline
// instead of blocking, so recursive fan-outs cannot deadlock the pool, and
// Wait waits for them too. WithKey runs each key's jobs in order, one at a
// time: a job whose key is busy waits behind it and joins the backlog when
// the key's job before it ends, so keys spread over the workers as they
// free. Map runs a function over a slice and returns the results in input
// order (beside an error, those of the calls that returned nil); MapSeq
// and Stream deliver them in order as they become ready (see Ordered
// streams). Stats
// reports what the pool holds and what every worker ran.
// Worker goroutines carry the pprof labels crew.pool and crew.worker.
//
// # Choosing a pool
//
// A one-shot group is errgroup's shape: one fan-out, one Wait, which closes
// the pool. A long-lived pool is a process-wide limit on some kind of work
// (database queries, image encodes, outbound calls) that many requests
// share: each request fans out as a Batch (Pool.NewBatch), which has its
// own Submit, Wait, first error and context, as an errgroup has, while
// every batch's jobs run on the pool's workers. A batch's failure cancels
// its own context and skips its own queued jobs only; the pool and the
// other batches go on. Batches share the workers first come, first served:
// a batch that queues many slow jobs first holds every worker until they
// have started, so WithLimit(n) caps a batch's share: at most n of its jobs
// run at once, and the rest wait in the backlog without holding a worker
// while other jobs overtake them. A pool made WithFairShare shares its
// workers between batches (or tenants, WithTenant) by the time their jobs
// run: a big request that queued many jobs gets its share of the workers,
// not all of them, and each backlogged share gets run time in proportion to
// its weight (WithWeight). A share that used less than its part lately, a
// tenant between requests, is credited what it left unused, up to the fair
// window (WithFairWindow, DefaultFairWindow), and runs ahead of the
// backlogged shares until it has used it; a share holding fewer jobs than
// the pool has workers, as a new request's does, is let into a full pool
// beyond its bound, by up to a job per worker: a small request beside a
// tenant with 2,000 jobs queued is not held behind them, while the credit of all
// quiet shares together stays bounded, so a backlogged share keeps its part
// over time. It pays on a backlog that holds a burst, for any jobs, and on
// the default bound for jobs that wait (I/O, calls) while the CPUs have
// room; where every job also waits for a CPU (jobs that compute) the
// default bound gains little from it (the benchmark report's advice
// "fair share" checks this on your machine).
// Without WithFairShare, WithTenant only labels the metrics.
// WithErrorHandler reports a long-lived pool's failures as they happen, not
// only at its Wait; WithoutPanicRecovery lets a job's panic crash the
// process instead of failing the job. Resize changes a running pool's
// workers, and Shutdown closes it with a deadline, as http.Server's does:
// once the deadline passes it cancels the jobs and returns, and Wait waits
// for those that still run. Batches take a pool with the default backlog
// (not WithMailbox, WithKey or WithConsistentHash). Map and MapBatch return
// results in input order. WithAdaptiveSize(min, max) lets a long-lived
// pool whose jobs wait on a downstream of unknown capacity find its own
// size from their run times; CPU-bound jobs want GOMAXPROCS workers.
//
//	shape                          make it with                    waits for                ends with
//	one fan-out, errgroup-like     WithContext(ctx, n), NewGroup   every job                Wait (closes the pool)
//	typed jobs, one handler        NewPool(n, handle)              every job                Wait
//	a shared, long-lived pool;     p.NewBatch(ctx, WithLimit(k))   the batch's jobs only    b.Wait per batch;
//	one batch per request                                                                   p.Shutdown(ctx) at exit
//	the same, fair between         NewGroup(n, WithFairShare()),   the batch's jobs only    b.Wait per batch
//	requests or tenants            p.NewBatch(ctx, WithTenant(t))
//	ordered results                Map(ctx, n, inputs, f)          every input              its return
//	ordered results, shared pool   MapBatch(ctx, p, inputs, f)     the batch's inputs only  its return
//	ordered results as they come   MapSeq(ctx, n, seq, f)          the window's inputs      the range loop's end
//	the same, shared pool          MapSeqBatch(ctx, p, seq, f)     the window's inputs      the range loop's end
//	ordered callbacks              NewStream(ctx, n),              every task               s.Wait
//	                               NewStreamBatch(ctx, p)
//
// Pools and their backlogs:
//
//	pool                         jobs             backlog, bound               use it for
//	NewGroup(n)                  func(ctx) error  FIFO, n*(1+DefaultQueueSize)  errgroup.Group with SetLimit(n)
//	WithContext(ctx, n)          func(ctx) error  the same                      errgroup.WithContext: the first error cancels
//	NewPool(n, handle)           any T            the same                      typed jobs, one handler
//	NewPool(.., WithMailbox(f))  any T            f's mailbox, f's bound        pool-wide priority (NewStablePriority) or
//	                                                                            fairness between tenants (NewFair)
//	NewPool(.., WithKey(k))      any T            FIFO per key, unbounded       per-key order: accounts, devices, sessions
//	NewGroup(n,                  func(ctx) error  the same, following the size  jobs that call a service of unknown,
//	  WithAdaptiveSize(lo, hi))                                                 changing capacity (size in [lo, hi])
//	Map(ctx, n, inputs, f)       inputs[i]        FIFO, n*(1+DefaultQueueSize)  ordered results, one call per input
//
// # Ordered streams
//
// For a pipeline whose results go out in input order as each and those
// before it are done (re-encode a log, hash files for a manifest, write a
// CSV row per API call), MapSeq takes an iter.Seq and returns an
// iter.Seq2 of results and errors, and a Stream takes tasks one Submit at
// a time and runs their callbacks in submission order, as conc's stream
// does; MapSeqBatch and NewStreamBatch run as one batch of a shared pool.
// Both hold a window (WithWindow), a bound and not an allocation: at most
// that many inputs whose results are not delivered, and memory for those
// only. The first error cancels the work not started, as Map's does; the
// results before it are delivered, then the error. Breaking out of
// MapSeq's loop cancels and waits for the calls in progress. Neither
// allocates per input.
//
//	you have                                 you want                                  use
//	a slice                                  every result at once                      Map, MapBatch
//	a sequence (lines, rows) of any length   each result in order, as soon as ready    MapSeq, MapSeqBatch
//	code that submits tasks one at a time    a callback per task, in submission order  NewStream, NewStreamBatch
//
// # Observing pools and actors
//
// WithMetrics(m) reports what happens in a pool, an actor or a router as it
// happens, to m, a Metrics: a small interface of crew's own, so that the
// core depends on no metrics library. The nested modules promcrew (a
// Prometheus collector, with a Grafana dashboard) and otelcrew
// (OpenTelemetry instruments) implement it, and so can a few lines of yours
// (see ExampleWithMetrics). A pool reports its jobs submitted, completed,
// failed, panicked, skipped and dropped (and its workers replaced after a
// Goexit); each job's queue wait, from its acceptance to its dispatch, and its
// run time; each tenant's run time (WithTenant); and its backlog, running
// jobs, workers and blocked Submits, read when the metrics are read. An
// actor or a router reports its messages told, handled and failed, its dead
// letters, and its mailbox depth. Name what you measure (WithName): default
// names change from run to run.
//
//	to see                                   use
//	counts, waits and levels, in a dashboard WithMetrics(promcrew.New()) or otelcrew.New(provider)
//	each failure as it happens, in a log     WithErrorHandler(f)
//	a snapshot, in a test or a debug page    Pool.Stats, Batch.Stats, Ref.Len
//	a crash with its stack on a panic        WithoutPanicRecovery()
//	which pool burns the CPU                 CPU profiles: the labels crew.pool and crew.worker
//
// # Pitfalls
//
// What goes wrong most often, what it looks like, and the fix (the README
// has the same list as a table):
//
//   - A pool, group or Stream that never reaches Wait (or Shutdown): its
//     workers never end, and their goroutines pile up (pprof shows them
//     under the crew.pool label). Defer Wait right after the constructor.
//   - A Batch that never reaches Wait keeps its context, as an unwaited
//     errgroup.WithContext does. Defer the batch's Wait in the request
//     that made it.
//   - Wait called from inside one of the pool's (or the batch's) own jobs
//     waits for ever, as errgroup's Wait does inside a Go of its group:
//     the job waits for itself. Wait from the goroutine that submitted;
//     inside a job, fan out with Submit and the job's own context.
//   - A job that waits for another batch of its own pool holds a worker
//     while it waits; once every worker does, nothing runs. Give the inner
//     fan-out a pool of its own, or cap the outer batches WithLimit.
//   - A job's Submit with another context than the one it received blocks
//     on a full pool like any Submit and can deadlock it; with the job's
//     own context a full pool runs the new job inline.
//   - A Recorder (WithMetrics) or a dead-letter sink that blocks or is
//     slow slows every Submit, job and Tell that reports through it. Keep
//     it to atomic adds or a non-blocking send.
//   - A key function (WithKey, WithConsistentHash) or a priority mailbox's
//     less that blocks or uses the pool stalls the whole pool: they run
//     under its lock. Keep them pure and quick.
//   - An actor that is never stopped lives as long as the process: Stop
//     it, or Spawn it with a context that ends.
//   - WithFairShare orders the backlog; it does not add CPUs: with
//     CPU-bound jobs on the default bound every job also waits for a CPU,
//     and small requests gain little (see the README's Performance).
//
// # Costs
//
// The cost columns above and the figures in the README's Performance section
// come from one committed run of the bench/ program
// (bench/results/report.md), which measures crew side by side with errgroup,
// conc, ants, pond, protoactor-go, hand-written pools and the floor (a
// minimal pool around one lock with crew's guarantees of order, bound and
// context), and checks crew's performance targets. They are a 2-core virtual
// machine's, as ratios; go -C bench run . measures yours. A job through a
// pool or a batch, and a message told to an actor, allocate nothing; an idle
// actor adds 431 bytes to its goroutine.
package crew
