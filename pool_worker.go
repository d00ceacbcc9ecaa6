package crew

import (
	"context"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/sourcegraph/conc/panics"

	"github.com/crewlib/crew/internal/sched"
)

// A worker is one of a pool's goroutines. It runs the jobs the scheduler
// gives it: after each job, in the same turn of the scheduler's lock that
// counts the job out, it takes the next (see sched.Scheduler.Next), and
// finding none it waits until the scheduler grants it one. The pool starts
// it, and it ends when Wait stops it or when Resize retires it. A
// runtime.Goexit (in a job, say) ends its goroutine, not the worker: a new
// goroutine goes on from where it stopped (see replace).
type worker[T any] struct {
	pool *Pool[T]
	rec  *sched.Worker[T, *owner[T]] // the scheduler's record of the worker
	ctx  jobContext[T]               // the context the pool's own jobs receive on it: the pool's, marked as the worker's

	// Used by the worker's goroutine only.
	g          *sched.Grant[T, *owner[T]] // the job it holds: given to it, and run once started is set
	started    bool                       // g's job started: the next Next counts it out
	inJob      bool                       // g's job's handler runs: a panic now is the job's
	resume     bool                       // a runtime.Goexit ended the last goroutine inside Next: take the step Next decided (see replace)
	failed     bool                       // g's job's failure is being reported: a runtime.Goexit in the error handler fails it no more
	unmeasured bool                       // g's job was clocked in (see clockIn), and its end not measured yet
	dropped    bool                       // g's job failed, for WithAdaptiveSize (set by fail, cleared by clockIn)
	streak     int                        // jobs run since the worker was idle, or since yield last looked
	every      int                        // how many jobs yield looks at the clock once in
	since      time.Time                  // when yield began to time the worker's streak
	looked     time.Time                  // when yield last looked
	began      int64                      // the pool's clock as the job it holds started, if timed or metered
	ran        int64                      // the run time (ns) of the job it ended, if timed or metered
	now        int64                      // WithMetrics: the pool's clock as the worker's last job ended
	_          [64]byte                   // keeps workers off each other's cache lines
}

// workerKey is the key under which the context a job receives (a
// jobContext) finds itself, so that a job's Submit to its own pool with
// a context derived from it is recognised (see Pool.marked).
type workerKey struct{}

func newWorker[T any](p *Pool[T], r *sched.Worker[T, *owner[T]]) *worker[T] {
	w := &worker[T]{pool: p, rec: r, every: yieldEvery}
	w.ctx = jobContext[T]{Context: p.ctx, owner: &p.own, w: w}
	return w
}

// start starts the worker's goroutine. The pool's Wait waits for it.
func (w *worker[T]) start() {
	w.pool.goroutines.Add(1)
	go w.run()
}

// run is the worker's goroutine.
func (w *worker[T]) run() {
	p := w.pool
	defer p.goroutines.Done()
	// The worker labels its goroutine, so that CPU profiles show which
	// pool burns the time; goroutines its jobs start inherit them.
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("crew.pool", p.name, "crew.worker", strconv.Itoa(w.rec.Index()))))
	for w.jobs() {
		// A job panicked, and jobs recorded its failure: on to the next.
	}
}

// jobs runs the jobs the scheduler gives the worker, until the scheduler
// stops the worker (jobs returns false), a job panics (jobs records the
// panic as the job's failure and returns true, for run to call it again)
// or something calls runtime.Goexit (a new goroutine takes the worker
// on: see exited). One deferred call per run of jobs recovers a panic,
// rather than one per job. It keeps only a job's panic (one raised while
// a handler runs: inJob), and only with recovery on: any other goes on,
// raised again at once with its stack, which the deferred call runs on
// top of, and crashes the process as it would without the pool.
func (w *worker[T]) jobs() (again bool) {
	p := w.pool
	returned := false
	defer func() {
		if returned {
			return
		}
		switch v := recover(); {
		case v == nil: // runtime.Goexit: in a job, a dead-letter sink, the error handler or the Recorder
			w.exited()
		case !w.inJob || p.noRecovery:
			panic(v)
		default:
			again = w.recovered(v)
		}
	}()
	for {
		var g *sched.Grant[T, *owner[T]]
		var ok bool
		if !w.resume {
			ended := w.started
			w.started = false // Next may deliver dead letters, whose sink may call runtime.Goexit: then w holds a job not started
			g, ok = p.s.Next(w.rec, ended, w.ran, w.now, p.seesStop())
		} else {
			// The worker's last goroutine ended inside Next (a dead-letter
			// sink called runtime.Goexit): take the step Next decided.
			w.resume = false
			g, ok = p.s.Resume(w.rec)
		}
		if !ok { // stopped by Wait, or retired
			returned = true
			return false
		}
		w.g, w.started = g, true
		if w.rec.Waited() {
			w.streak, w.since = 0, time.Time{}
		}
		if g.Skipped() {
			w.skip(g)
			continue
		}
		clocked := p.clocked || w.rec.Timed()
		if clocked {
			w.clockIn(g)
		}
		if w.streak++; w.streak >= w.every {
			w.yield()
		}
		o := g.Owner()
		w.inJob = true
		err := p.handle(o.contextOn(w), g.Job())
		w.inJob = false
		if err != nil {
			w.fail(err)
		}
		if clocked {
			w.measured()
		}
	}
}

// recovered records v, the recovered panic of the job the worker holds,
// as the job's failure, and reports true. If the error handler (or the
// Recorder) calls runtime.Goexit meanwhile, a new goroutine takes the
// worker on.
func (w *worker[T]) recovered(v any) bool {
	w.inJob = false
	exited := true
	defer func() {
		if exited {
			defer w.replace()
			w.measured() // if the Goexit came before it
		}
	}()
	w.fail(panicked("job", panics.NewRecovered(1, v))) // first: kept for Wait, whatever the Recorder does
	w.measured()
	exited = false
	return true
}

// fail records err, the failure of the job the worker holds, for its
// owner's Wait, and tells the scheduler, which counts it as it counts the
// job out (see sched.Worker.Fail), then reports it. If the error handler
// (or the Recorder) calls runtime.Goexit meanwhile, the failure is kept
// and counted all the same, and not recorded again (see exited).
func (w *worker[T]) fail(err error) {
	f := failureOf(err)
	w.failed, w.dropped = true, true
	w.rec.Fail(f)
	w.g.Owner().record(err)
	w.pool.report(err, f)
	w.failed = false
}

// measured reports the end of the job the worker holds, once, if it was
// clocked in (see clockIn), as it returns or panics, or as runtime.Goexit
// ends it: its run time to the Recorder, or to the scheduler if it is
// timed.
func (w *worker[T]) measured() {
	if !w.unmeasured {
		return
	}
	w.unmeasured = false // before the Recorder, which might call runtime.Goexit
	p := w.pool
	end := p.clock()
	w.ran = end - w.began
	var e Event
	if p.adapt != nil {
		e = p.adapt.observe(w.ran, end, w.dropped) // before the Recorder too
	}
	if p.rec != nil {
		if e != 0 {
			defer p.rec.Add(e, 1) // also if the Recorder calls runtime.Goexit below
		}
		w.now = end
		w.ended(w.g)
	}
}

// skip skips g's job: it is a dead letter, sent to its batch's sink or
// the pool's.
func (w *worker[T]) skip(g *sched.Grant[T, *owner[T]]) {
	sink := g.Owner().sink
	if r := w.pool.rec; r != nil {
		r.Add(EventSkipped, 1) // before the sink, which may call runtime.Goexit
	}
	if sink != nil {
		sink(DeadLetter{Message: g.Job(), Target: w.rec.Name, Reason: w.pool.s.Cause(g)})
	}
}

// runJob is a group's handler: the job runs itself.
func runJob(ctx context.Context, j Job) error { return j(ctx) }

// runInline runs job, which a job of o's submitted with ctx while the
// pool was full, on the submitting goroutine, with the context o's jobs
// receive (for the pool's own, the context of the worker that runs the
// job that submitted it); it was never counted in.
func (o *owner[T]) runInline(ctx context.Context, job T) {
	_, w := o.pool.marked(ctx)
	returned := false
	defer catch(&returned, !o.pool.noRecovery, "job", func(err error, _ bool) { o.endInline(w, err) })
	err := o.pool.handle(o.contextOn(w), job)
	returned = true
	o.endInline(w, err)
}

// endInline counts the end of a job of o's run inline on worker w (nil
// for a batch's job, whose jobs share one context, which names no
// worker), failed if it ended with err (it returned it, panicked or called
// runtime.Goexit). A Goexit goes on to end the job that ran it, which
// fails too (see exited).
func (o *owner[T]) endInline(w *worker[T], err error) {
	if w != nil {
		w.rec.Inline.Add(1)
	}
	o.pool.s.RanInline(o.rec) // first: a failure is never counted ahead of its job's end
	if err != nil {
		o.fail(err)
	}
}

// exited records a runtime.Goexit that is ending the worker's goroutine:
// in the job it holds, if that started (the job fails, with its batch or
// the pool), else in a dead-letter sink, before that job started (the pool
// fails); but in the error handler that the job's failure reached, it
// fails nothing more. Then it measures the job's end, if it was not, and
// a new goroutine takes the worker on, even if the error handler or the
// Recorder calls runtime.Goexit again.
func (w *worker[T]) exited() {
	defer w.replace()
	defer w.measured()
	w.inJob = false
	switch {
	case w.failed: // in the error handler, or the Recorder: the job's failure is recorded
	case w.started:
		w.fail(goexited("job"))
	default: // in a dead-letter sink, inside Next: no job of the worker's failed, the pool did
		w.pool.own.fail(goexited("job"))
	}
}

// replace starts a goroutine in the place of the worker's, which a
// runtime.Goexit is ending, and counts it (Stats.Replaced, EventReplaced).
// The new goroutine goes on from where this one stopped: it counts out
// the job the worker held, if that started (see jobs), or, if Next was
// under way (started is false then), takes the step Next decided. The
// pool's Wait waits for it: it is counted in before this one is counted
// out. This goroutine leaves the worker's fields alone from then on.
func (w *worker[T]) replace() {
	p := w.pool
	w.resume, w.failed, w.inJob = !w.started, false, false
	w.start()
	p.replaced.Add(1)
	if p.rec != nil {
		p.rec.Add(EventReplaced, 1)
	}
}

// A worker looks at the clock once in every jobs (see yield): at first
// once in yieldEvery, then half as often after each look that finds
// little time passed since the last (less than yieldAfter/8), down to once
// in maxYieldEvery, and twice as often after one that finds more than
// yieldAfter, so that quick jobs pay for few looks (a look reads the
// clock: tens of nanoseconds on a virtual machine) and slow ones are
// looked at often enough. It yields the processor once it has run jobs
// without a break for yieldAfter.
const (
	yieldEvery    = 16
	maxYieldEvery = 1024
	yieldAfter    = 250 * time.Microsecond
)

// yield yields the processor once the worker has run jobs without a break
// for yieldAfter, to the other workers (and goroutines) waiting for one:
// Go preempts a goroutine only after 10 ms, and a worker whose backlog
// never empties would otherwise keep its processor that long while other
// workers, one perhaps holding a job granted to it, wait, and the workers
// would share the jobs unevenly.
func (w *worker[T]) yield() {
	w.streak = 0
	now := time.Now()
	switch {
	case w.since.IsZero():
		w.since = now
	case now.Sub(w.since) >= yieldAfter:
		w.since = now
		runtime.Gosched()
	}
	switch gap := now.Sub(w.looked); {
	case gap < yieldAfter/8 && w.every < maxYieldEvery:
		w.every *= 2
	case gap > yieldAfter && w.every > 1:
		w.every /= 2
	}
	w.looked = now
}
