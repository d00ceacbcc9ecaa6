package crew

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crewlib/crew/internal/sched"
)

// DefaultQueueSize is how many jobs per worker a pool with the default
// backlog holds waiting beside those running (see WithQueueSize): small,
// so that a submitter runs only a little ahead of the workers and a pool
// that fails skips little work.
const DefaultQueueSize = 2

// A Pool runs jobs of type T on a fixed set of worker goroutines that share
// one backlog. It replaces an errgroup fan-out: Submit where you would call
// Go, Wait where you would call Wait. Create one with NewPool (typed jobs
// and one handler), NewGroup (jobs are functions) or WithContext (a group
// whose context the first error cancels).
//
// Dispatch. While the backlog is empty, Submit hands a job straight to an
// idle worker (WithStrategy picks which, when several are); otherwise the
// job joins the backlog, and each worker takes the oldest job from it
// before it goes idle. So no job waits while a worker is idle, and jobs are
// dispatched in submission order: if a job has been dispatched (handed to a
// worker, or taken from the backlog), so has every job whose Submit
// returned before its Submit began. A dispatched job runs, even if the
// pool's context ends before it starts; the jobs still in the backlog when
// the pool sees its context end are skipped. So a failure never skips a job
// submitted before the one that failed, as with errgroup. Exceptions: a
// job's own Submit may run its job at once, inline (see Submit); a priority
// or Fair backlog (WithMailbox) dispatches in its own order; a keyed job
// (WithKey) waits for the job of its key before it; a pool WithFairShare
// keeps submission order within each share only (see WithFairShare).
//
// Bound. A pool holds at most workers×(1+DefaultQueueSize) jobs, counting
// those running (WithQueueSize changes it); Submit blocks while it is full,
// and blocked Submits take the room that opens in the order they came
// (WithFairShare: share by share, in turn, each share's in order, with
// room beside the bound for a share that holds little). A
// pool with a backlog of your own (WithMailbox) is bounded by it instead,
// unless WithQueueSize is given too; with a priority backlog, a full pool
// blocks an urgent Submit too, until a job ends.
//
// Batches. A long-lived pool serves many batches (NewBatch), each with its
// own Submit, Wait, first error and context, as an errgroup has, sharing
// the pool's workers and its bound: one pool per process caps the work of
// every request. Resize changes the number of workers while the pool runs,
// and Shutdown closes the pool with a deadline. Wait (or Shutdown) closes
// the pool to every batch too.
//
// A Pool is safe for concurrent use; the zero Pool is not usable (every
// method panics, with a message that names the constructors, as every
// method of a nil *Pool does). Its
// worker goroutines start in the constructor and end in Wait, which every
// pool must reach: a pool that is never waited for leaks its workers.
// Submit synchronizes before its job runs: the job sees every write made
// before Submit was called. The end of every job synchronizes before the
// return of Wait.
type Pool[T any] struct {
	// The scheduler first, so that it starts on a cache line (a Pool is
	// large enough to be allocated on one): its lock and the fields that
	// change with every job share their lines with nothing else.
	s sched.Scheduler[T, *owner[T]]
	_ [64]byte

	// Set by the constructor, then only read, by every Submit and job.
	handle     func(context.Context, T) error
	isNil      func(T) bool // reports a nil job, for groups
	name       string
	ctx        context.Context // the pool's context, which jobs receive
	cancel     context.CancelCauseFunc
	watch      bool        // ctx's parent can end: Submits and workers read ctx (see seesStop)
	onError    func(error) // WithErrorHandler, or nil
	noRecovery bool        // WithoutPanicRecovery: a job's panic is not recovered
	rec        Recorder    // WithMetrics: where the pool reports, or nil
	stamp      bool        // WithMetrics, and no backlog mailbox (which keeps no time): Submit stamps its job with when it was accepted
	epoch      time.Time   // what clock reads from
	adapt      *sizer      // WithAdaptiveSize: the size's controller, or nil
	clocked    bool        // WithMetrics or WithAdaptiveSize: every job's run time is measured

	own owner[T] // the pool's own jobs: their context, sink and errors

	_ [64]byte

	replaced atomic.Int64 // workers whose goroutine was replaced, read by Stats
	reported atomic.Int64 // WithMetrics: the jobs accepted whose Submit counted them, plus closing once Wait is done with them (see closeMetrics)
	accepted atomic.Int64 // WithMetrics: the jobs accepted in all, once Wait is done with them
	recClose atomic.Bool  // WithMetrics: the Recorder's Close was called

	deadLog    sparse         // the dead letters logged without a sink, its batches' included (see sendDeadLetter)
	goroutines sync.WaitGroup // the workers' goroutines
	resizing   sync.Mutex     // serializes Resize, and Wait's stop of the workers: a worker Resize made is started before Wait stops them
	unwatch    func() bool    // stops the watch of ctx that refuses the blocked Submits once it ends
	refused    chan struct{}  // closed once that watch has refused them

	waitOnce sync.Once
	result   error
}

// unmade panics, naming method: every method of a zero Pool does, for it
// has no worker, and a job it took would never run, and so does every
// method of a nil *Pool, rather than dereference nil. The methods test p
// and p.refused, which every constructor sets, and call unmade only then,
// so that the test stays inline.
func (p *Pool[T]) unmade(method string) {
	if p == nil {
		panic("crew: " + method + ": nil Pool: make one with NewPool, NewGroup or WithContext")
	}
	panic("crew: " + method + ": the Pool was not made by NewPool, NewGroup or WithContext: use one of them")
}

// Context returns the pool's context: the one its jobs receive (with a
// value added that marks their own Submits: see Submit).
func (p *Pool[T]) Context() context.Context {
	if p == nil || p.refused == nil {
		p.unmade("Pool.Context")
	}
	return p.ctx
}

// Name reports the pool's name (see WithName).
func (p *Pool[T]) Name() string {
	if p == nil || p.refused == nil {
		p.unmade("Pool.Name")
	}
	return p.name
}

// Submit gives job to the pool and returns nil once the pool holds it. It
// does not wait for the job to run: Wait does. The job runs with the
// pool's context, not ctx; ctx only bounds the wait for room. Submit hands
// the job to an idle worker, or queues it in the backlog (see Pool for the
// order). It does not allocate in steady traffic. It panics if ctx is nil,
// or if job is a nil Job (NewGroup, WithContext).
//
// Submit blocks only while the pool is full. Blocked Submits take the room
// that opens in the order they came; with WithFairShare, share by share in
// turn.
//
// Submit returns an error, and the job will not run, when:
//
//   - Wait or Shutdown has begun: ErrPoolClosed, whatever ctx's state, also
//     to a Submit blocked at that moment (a job's own Submit aside: see
//     below);
//   - ctx is done already, or ends while Submit waits: ctx.Err();
//   - the pool's context is done (after the first error of a WithContext
//     group, say): that context's Err();
//   - a backlog of your own (WithMailbox) refuses it: what a Fail or
//     DropNewest mailbox returns (ErrMailboxFull, ErrDropped), which
//     happens only when no worker is idle. A Backpressure mailbox makes
//     Submit wait while it is full.
//
// A job may submit more jobs to its own pool, while it runs, by calling
// Submit with the context it received or one derived from it. The context
// WithContext returned is not that one (see WithContext). Such a Submit
// never blocks: when the pool is full, it runs the new job itself, inline,
// before it returns, so that jobs waiting for room held by jobs waiting
// for room cannot deadlock the pool. A keyed pool (WithKey,
// WithConsistentHash) queues the job beyond its bound instead, to keep its
// key's order. A job's own Submit is accepted after Wait began too, and
// Wait then waits for it, as errgroup's Wait does for a Go called by a
// goroutine of the group.
//
// A Submit from a job with another context blocks like any other, and can
// deadlock a full pool; so can a batch's job that submits to the pool
// rather than to its batch (see Batch.Submit).
func (p *Pool[T]) Submit(ctx context.Context, job T) error {
	if p == nil || p.refused == nil {
		p.unmade("Pool.Submit")
	}
	o := &p.own
	if ctx == nil || p.rec != nil || p.isNil != nil && p.isNil(job) || ctx.Err() != nil {
		return o.submit("Submit", ctx, job) // its panics, its metrics, a done ctx
	}
	// The common case, owner.submit's, written out for the pool's own
	// jobs: a call less per job, about 2 ns of a no-op job's 52-56
	// (BenchmarkPool, one submitter); everything else is owner.submit's.
	// Batch.Submit writes out the same case for a batch's jobs: change
	// both together.
	mode := o.mode(ctx)
	v, tk, err := p.s.Offer(job, o.rec, mode, 0, p.seesStop())
	if v == sched.Accepted {
		return nil
	}
	return o.decide(ctx, job, 0, mode, v, tk, err)
}

// TrySubmit gives job to the pool if it has room right now, without
// blocking, and reports whether it did, like errgroup's TryGo. It returns
// false when the pool is full (or its backlog mailbox refuses the job),
// closed by Wait, or its context is done. A pool WithFairShare has a job
// per worker of room beside its bound for a share holding fewer jobs than
// it has workers (see WithFairShare).
func (p *Pool[T]) TrySubmit(job T) bool {
	if p == nil || p.refused == nil {
		p.unmade("Pool.TrySubmit")
	}
	return p.own.trySubmit("TrySubmit", job)
}

// Wait closes the pool to new jobs, waits until every accepted job has run
// (or been skipped, once the pool's context is done), stops the workers and
// waits for their goroutines to exit, cancels the pool's context, and
// returns the first error a job returned or raised (a panic, as an error
// that errors.As unwraps to *panics.ErrRecovered, with its stack; a
// runtime.Goexit, as an error that errors.Is matches with ErrGoexit). With
// WithAllErrors it returns
// every error, joined. If jobs were skipped because the pool's context
// ended and none failed, it returns the context's cause, so that a pool
// never reports success for jobs its context kept from running. The jobs a
// DropOldest backlog evicts are dead letters, counted in Stats.Dropped, not
// errors.
//
// Wait may be called more than once, from any goroutine but the pool's own
// jobs (which would wait for themselves); every call returns the same.
func (p *Pool[T]) Wait() error {
	if p == nil || p.refused == nil {
		p.unmade("Pool.Wait")
	}
	p.waitOnce.Do(func() {
		<-p.s.Shut(ErrPoolClosed) // the blocked Submits' jobs are new: refuse them
		if !p.unwatch() {
			<-p.refused // the context ended: refuseAll ran, or runs
		}
		p.resizing.Lock() // Resize does nothing once the pool is closed: the workers stay as they are
		defer p.resizing.Unlock()
		p.s.Dismiss() // every worker exits as it finds its channel closed
		p.goroutines.Wait()
		p.result = p.own.outcome(p.s.SkippedOwn())
		if p.rec != nil {
			p.closeMetrics()
		}
		p.cancel(nil)
	})
	return p.result
}
