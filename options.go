package crew

import (
	"context"
	"strconv"
	"time"
)

// An Option configures an actor (Spawn), a router that spawns its routees
// (SpawnRouter), a pool (NewPool, NewGroup, WithContext, Map), a batch
// (Pool.NewBatch, MapBatch) or an ordered stream (MapSeq, MapSeqBatch,
// NewStream, NewStreamBatch). Each option's doc says what it applies to; a
// constructor given an option that does not apply to it, such as
// WithStrategy to Spawn, panics with a message that names both, rather
// than ignore it.
type Option func(*options)

// optSet records which options were given, one bit per option.
type optSet uint32

const (
	optName optSet = 1 << iota
	optMailbox
	optDeadLetters
	optErrorHandler
	optStrategy
	optQueueSize
	optKey
	optParent
	optCancelOnError
	optAllErrors
	optLimit
	optFairShare
	optTenant
	optWeight
	optNoRecovery
	optMetrics
	optFairWindow
	optWindow
	optAdaptive
)

// optNames names each option for the panics of only, in bit order, with
// what it applies to.
var optNames = [...]string{
	"WithName",
	"WithMailbox",
	"WithDeadLetters",
	"WithErrorHandler (for actors, routers and pools)",
	"WithStrategy (for routers and pools)",
	"WithQueueSize (for pools)",
	"WithKey or WithConsistentHash (for typed pools and SpawnRouter)",
	"WithParent (for pools)",
	"WithCancelOnError (for pools)",
	"WithAllErrors (for pools and batches)",
	"WithLimit (for batches)",
	"WithFairShare (for NewPool, NewGroup and WithContext)",
	"WithTenant (for batches)",
	"WithWeight (for batches)",
	"WithoutPanicRecovery (for actors, routers and pools)",
	"WithMetrics (for actors, routers and pools)",
	"WithFairWindow (for NewPool, NewGroup and WithContext)",
	"WithWindow (for MapSeq, MapSeqBatch, NewStream and NewStreamBatch)",
	"WithAdaptiveSize (for NewPool, NewGroup and WithContext)",
}

// Which options each kind of constructor takes.
const (
	actorOpts  = optName | optMailbox | optDeadLetters | optErrorHandler | optNoRecovery | optMetrics
	routerOpts = actorOpts | optStrategy | optKey
	poolOpts   = optName | optMailbox | optDeadLetters | optStrategy | optQueueSize | optKey |
		optParent | optCancelOnError | optAllErrors | optFairShare | optFairWindow | optErrorHandler | optNoRecovery | optMetrics | optAdaptive
	batchOpts = optAllErrors | optDeadLetters | optLimit | optTenant | optWeight
)

// only panics if an option outside allowed was given to fn.
func (o *options) only(fn string, allowed optSet) {
	extra := o.set &^ allowed
	if extra == 0 {
		return
	}
	for i, name := range optNames {
		if extra&(1<<i) != 0 {
			panic("crew: " + fn + ": " + name + " does not apply")
		}
	}
}

type options struct {
	set         optSet // the options given
	name        string
	newMailbox  any // func() Mailbox[T] for the actor's T, checked by Spawn
	deadLetters func(DeadLetter)
	onError     func(error)
	noRecovery  bool
	metrics     Metrics
	recorder    Recorder // a router's, for its routees (see SpawnRouter)
	strategy    Strategy

	// pools only
	keyed         func() any // makes a keys.Index[T] or a keys.Pin[T] (WithKey, WithConsistentHash)
	pinned        bool       // keyed makes a keys.Pin[T]: WithConsistentHash
	queueSize     int        // WithQueueSize, if set (optQueueSize): 0 is a bound too
	parent        context.Context
	cancelOnError bool
	allErrors     bool
	fairShare     bool
	fairWindow    time.Duration // WithFairWindow, if set (optFairWindow)
	adaptMin      int           // WithAdaptiveSize, if set (optAdaptive)
	adaptMax      int

	// batches only
	limit  int
	tenant string
	weight int

	// ordered streams only
	window int
}

func collect(opts []Option) options {
	var o options
	for _, opt := range opts {
		if opt == nil {
			panic("crew: nil Option")
		}
		opt(&o)
	}
	return o
}

// WithName names the actor, for dead letters, errors and logs. A router or
// pool that spawns its routees names them name-0, name-1, and so on; one
// without a name is "router-1" or "pool-1", numbered in creation order.
func WithName(name string) Option {
	return func(o *options) { o.set |= optName; o.name = name }
}

// WithMailbox makes each actor (Spawn, SpawnRouter) take its mailbox from
// newMailbox, which is called once per actor; the default is NewUnbounded.
// Give each actor its own mailbox: a mailbox shared between actors makes Len
// and dead letters meaningless. An actor that many goroutines tell at once
// is faster on a Segmented mailbox (see the package's "Choosing a
// mailbox").
//
// For a pool (NewPool, NewGroup, WithContext), newMailbox makes the pool's
// backlog, called once: the queue of jobs no worker has taken yet, which
// every worker takes from. A priority mailbox then orders the whole pool,
// a Fair one shares the whole pool between its keys. Such a pool is bounded
// by its mailbox unless WithQueueSize is given too (see Pool). The pool
// calls the backlog's methods, and so its less or key function, under its
// own lock: they must be quick, and must not block or use the pool.
//
// T must be the actor's message type, or the pool's job type: the
// constructor panics otherwise.
func WithMailbox[T any](newMailbox func() Mailbox[T]) Option {
	if newMailbox == nil {
		panic("crew: WithMailbox: nil mailbox factory")
	}
	return func(o *options) { o.set |= optMailbox; o.newMailbox = newMailbox }
}

// WithDeadLetters sends each message that will never reach its handler to
// sink, with the reason: rejected by a full mailbox, evicted by a DropOldest
// one, told to a stopped actor, or left queued when the actor stopped. sink
// runs on the goroutine that gave up on the message (a sender or the actor),
// possibly on several at once; it must not block for long or panic. Dead
// letters are always counted (Ref.DeadLetters); without this option they are
// also logged through log/slog, sparingly: each actor, keyed router (its
// own dead letters) and pool (its batches' included) logs its own 1st,
// 2nd, 4th, 8th... with that count, so that a storm in one hides no
// other's first.
func WithDeadLetters(sink func(DeadLetter)) Option {
	if sink == nil {
		panic("crew: WithDeadLetters: nil sink")
	}
	return func(o *options) { o.set |= optDeadLetters; o.deadLetters = sink }
}

// WithErrorHandler sends each error a handler returns, and each panic it
// raises (as an error that errors.As unwraps to *panics.ErrRecovered, with
// the stack), to onError, on the goroutine that ran it, as it happens.
//
// For an actor or a router's routees, onError runs on the actor's
// goroutine, and the actor goes on with its next message; without this
// option, errors are logged through log/slog, sparingly: the 1st, 2nd,
// 4th, 8th... of each actor, with that number and the actor's name.
//
// For a pool (NewPool, NewGroup, WithContext, Map), onError receives every
// non-nil error a job returns, its batch's jobs included, each recovered
// panic and each runtime.Goexit, on the worker (or, for a job run inline,
// on the goroutine that ran it), after the job returns and before it
// counts as ended: so each call happens before the Wait (the pool's, or
// the job's batch's) that returns after that job. Wait still returns the
// errors as before: onError is how a long-lived pool's failures reach a
// log or an alert when they happen, rather than at exit. onError must not
// panic (a panic in it crashes the process), block for long, or wait for
// the pool; a runtime.Goexit in it ends its goroutine, as a job's does, and
// a new goroutine takes the worker on (the failure it reports is kept for
// Wait all the same).
func WithErrorHandler(onError func(error)) Option {
	if onError == nil {
		panic("crew: WithErrorHandler: nil handler")
	}
	return func(o *options) { o.set |= optErrorHandler; o.onError = onError }
}

// WithoutPanicRecovery lets a panicking handler (Spawn, SpawnRouter) or
// job (NewPool, NewGroup, WithContext, Map) crash the process at once, as
// a panic in a goroutine of its own would, with the panic's own stack.
// By default crew recovers the panic and turns it into an error with that
// stack: a job's panic fails the job (and its batch or group, as an
// error would) and reaches Wait and WithErrorHandler, and an actor goes on
// with its next message. Keep the default where one bad input must not
// take a server down and its error is reported; choose this where a panic
// means the process's state can no longer be trusted, or where a crash
// with its stack, restarted by a supervisor, is how failures are seen.
func WithoutPanicRecovery() Option {
	return func(o *options) { o.set |= optNoRecovery; o.noRecovery = true }
}

// WithQueueSize bounds a pool at workers×(1+n) jobs held (waiting in the
// backlog, handed to a worker or running): n waiting jobs per worker, on
// average, beside the one it runs. Submit blocks while the pool is that
// full. With n = 0 the pool holds a job per worker and nothing waits
// beside them: Submit returns once a worker has the job, the bound of
// errgroup's SetLimit(workers). The default, with the default backlog, is
// DefaultQueueSize; with WithMailbox, WithKey or WithConsistentHash the
// pool sets no bound of its own unless given this option. A small n keeps
// memory and the delay of a burst's last jobs low; a larger one lets
// submitters run further ahead of the workers, and, first come, first
// served, lets one client's burst delay every other client's jobs by its
// whole length (the benchmark report's advice "default bound" checks this
// on your machine). A pool WithFairShare keeps a job per worker of room
// beside the bound, for the shares that hold fewer jobs than it has
// workers (see WithFairShare): it holds at most workers×(2+n) jobs. The
// bound follows the workers as Resize changes them.
// It is held whole on every platform; where workers×(1+n) is too large
// for an int (math.MaxInt, or a large n on a 32-bit platform), the pool
// has no bound of its own, as with a mailbox, rather than a smaller one.
// It applies to pools and panics if n is negative.
func WithQueueSize(n int) Option {
	if n < 0 {
		panic("crew: WithQueueSize: n must be at least 0, got " + strconv.Itoa(n))
	}
	return func(o *options) { o.set |= optQueueSize; o.queueSize = n }
}

// WithParent derives a pool's context, the one its jobs receive, from ctx:
// once ctx is done, the jobs still queued are skipped (counted in
// Stats.Canceled, and sent to WithDeadLetters' sink if there is one) and
// Submit refuses new ones. Without it the pool's context derives from
// context.Background. WithContext sets it.
func WithParent(ctx context.Context) Option {
	if ctx == nil {
		panic("crew: WithParent: nil context")
	}
	return func(o *options) { o.set |= optParent; o.parent = ctx }
}

// WithCancelOnError makes the first error (or panic) of a pool's jobs
// cancel the pool's context, with that error as its cause, as errgroup's
// WithContext does: jobs still queued are then skipped, and running ones see
// their context done. WithContext sets it.
func WithCancelOnError() Option {
	return func(o *options) { o.set |= optCancelOnError; o.cancelOnError = true }
}

// WithAllErrors makes a pool's Wait return every error its jobs returned or
// raised, joined with errors.Join in the order they were recorded, instead of
// the first one alone. Errors that only echo the end of the pool's context
// (context.Canceled or DeadlineExceeded returned once it is done, as jobs
// interrupted by the first error's cancellation do) are left out, but for the
// first error. The pool keeps every error until Wait: a pool whose jobs fail
// by the million keeps a million errors.
func WithAllErrors() Option {
	return func(o *options) { o.set |= optAllErrors; o.allErrors = true }
}
