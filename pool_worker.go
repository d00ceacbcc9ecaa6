package crew

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/conc/panics"
)

// A worker is one of a pool's actors: a Ref whose mailbox (a workerBox) is
// its view of the pool's dispatcher. Dequeue gives it the job handed to it,
// else the oldest job of the backlog; finding none, it waits for its
// signal, which a job handed to it sends.
type worker[T any] struct {
	pool  *Pool[T]
	ref   *Ref[T]
	ctx   context.Context // the pool's context, marked as this worker's
	index int
	keyed bool // WithKey: the dispatcher needs each job's key at its end

	// Guarded by the dispatcher's lock.
	own               ring[task[T]] // jobs handed to this worker, or queued at it by WithConsistentHash
	dead              bool          // died, or stopped by Wait
	away              bool          // takes no job from the backlog: not joined yet, or retired (Resize)
	retired           bool          // retired by Resize: exits once it has run the jobs handed to it
	handled, canceled int64         // jobs it ran, jobs it skipped: counted with held, for Stats
	batch             *Batch[T]     // the batch of the job it took last, if any

	// Written by the worker's goroutine, read by the dispatcher on it.
	ended   bool      // a job ended since the dispatcher last counted one out
	skipped bool      // that job was skipped, not run
	last    T         // that job, for its key (WithKey)
	streak  int       // jobs taken since the worker was idle, or since share last looked
	since   time.Time // when share began to time the worker's streak
	exit    bool      // retired, with nothing left to run: its mailbox stops it
	goexit  bool      // a job called runtime.Goexit, ending the worker

	// Also written by the goroutines of its jobs, whose own Submits on a
	// full pool run inline on them.
	failed, panicked, inline atomic.Int64
	_                        [64]byte // keeps workers off each other's cache lines
}

// workerKey marks the context a worker hands its jobs, so that a job's
// Submit to its own pool is recognised (see Submit).
type workerKey struct{}

// workerBox is a worker's mailbox: the pool's dispatcher seen from the
// worker. The pool never tells its workers anything: it hands them jobs
// through the dispatcher, so Enqueue is never called.
type workerBox[T any] struct{ w *worker[T] }

var errTold = errors.New("crew: a pool's worker takes no messages")

func (b workerBox[T]) Enqueue(context.Context, T) error { return errTold }

// Dequeue gives the worker its next job; a worker that Resize retired stops
// here once it has none.
func (b workerBox[T]) Dequeue() (T, bool) {
	job, ok := b.w.pool.d.next(b.w, true)
	if !ok && b.w.exit {
		b.w.ref.Stop()
	}
	return job, ok
}

// Len reports the jobs queued at the worker itself.
func (b workerBox[T]) Len() int {
	d := &b.w.pool.d
	d.mu.Lock()
	defer d.mu.Unlock()
	return b.w.own.n
}

// Close is called once the worker's actor stops: by Wait, when nothing is
// left, or because a job called runtime.Goexit. The jobs left with a dead
// worker become dead letters here, which count them out of the pool, so
// that Close returns nothing for the actor to dead-letter.
func (b workerBox[T]) Close() []T {
	d := &b.w.pool.d
	d.deadLetters(d.bury(b.w), b.w.ref.name, errGoexit)
	return nil
}

// run is the worker's handler. It runs the job its mailbox gave, then the
// next ones the dispatcher has for it, until there is none: while the
// backlog lasts, a job costs one turn of the dispatcher's lock, not a turn
// of the actor's loop too. The worker's mailbox then finds it idle.
func (w *worker[T]) run(_ context.Context, job T) error {
	d := &w.pool.d
	for ok := true; ok; job, ok = d.next(w, false) {
		w.runJob(job)
	}
	return nil
}

// skip accounts for a job the dispatcher skipped because the pool's
// context, or its batch's, is done.
func (w *worker[T]) skip(job T) {
	p := w.pool
	sink, ctx := p.sink, p.ctx
	if b := w.batch; b != nil {
		sink = b.sink
		if b.ctx.Err() != nil {
			ctx = b.ctx
		}
	}
	if sink != nil {
		sink(DeadLetter{Message: job, Target: w.ref.name, Reason: context.Cause(ctx)})
	}
	w.ended, w.skipped = true, true
	if w.keyed {
		w.last = job
	}
}

// runJob runs a job the dispatcher gave the worker and records its error
// or panic; the dispatcher counts it out at the worker's next turn.
// finish also runs when the job calls runtime.Goexit, which ends the
// worker: its actor then reports that to workerError and closes its
// mailbox.
func (w *worker[T]) runJob(job T) {
	defer w.finish(job)
	ctx := w.ctx
	if b := w.batch; b != nil {
		ctx = &b.jobCtx
	}
	if err := w.pool.handle(ctx, job); err != nil {
		w.fail(err, w.batch)
	}
}

func (w *worker[T]) finish(job T) {
	w.recovered(recover(), w.batch)
	w.ended = true
	if w.keyed {
		w.last = job
	}
}

// runInline runs a job that one of the pool's jobs submitted while the
// pool was full, on the submitting goroutine; it was never counted in.
func (w *worker[T]) runInline(job T) {
	defer w.finishInline()
	if err := w.pool.handle(w.ctx, job); err != nil {
		w.fail(err, nil)
	}
}

func (w *worker[T]) finishInline() {
	w.recovered(recover(), nil)
	w.inline.Add(1)
}

// recovered records a panic of a job of batch b (nil: of the pool), if v is
// one.
func (w *worker[T]) recovered(v any, b *Batch[T]) {
	if v != nil {
		w.panicked.Add(1)
		r := panics.NewRecovered(2, v)
		if b != nil {
			b.panicked.Add(1)
		}
		w.fail(panicked("job", r), b)
	}
}

// fail records the error of a job of batch b, or of the pool if b is nil.
func (w *worker[T]) fail(err error, b *Batch[T]) {
	w.failed.Add(1)
	if b != nil {
		b.failed.Add(1)
		b.record(err)
		return
	}
	w.pool.record(err)
}

// record keeps err for Wait and cancels the pool's context on the first
// error if it should.
func (p *Pool[T]) record(err error) {
	if p.errs.add(err, p.ctx) && p.cancelOnError {
		p.d.cancel(p.cancel, err)
	}
}

// exited receives what the worker's actor reports; the jobs' own errors
// and panics are recorded by runJob, so this only sees a job's Goexit,
// which counts as a failed job, of the job's batch if it has one. It runs
// on the worker's goroutine, before its mailbox is closed.
func (w *worker[T]) exited(err error) {
	d := &w.pool.d
	d.mu.Lock()
	w.goexit = true
	d.mu.Unlock()
	w.pool.exits.Add(1)
	if b := w.batch; b != nil {
		b.failed.Add(1)
		b.record(err)
		return
	}
	w.pool.record(err)
}

// letter delivers the dead letter of a job dropped by the backlog or left
// with a dead worker: to the sink of its batch or of WithDeadLetters, or
// the log.
func (p *Pool[T]) letter(t task[T], target string, reason error) {
	if target == "" {
		target = p.name
	}
	sink := p.sink
	if t.b != nil {
		sink = t.b.sink
	}
	d := DeadLetter{Message: t.job, Target: target, Reason: reason}
	if sink != nil {
		sink(d)
	} else {
		logDeadLetter(d)
	}
}

// workerIndex reports the worker's index in its pool (for tests).
func (w *worker[T]) workerIndex() int { return w.index }

// shareEvery is how many jobs a worker runs between two looks at the
// clock, and shareAfter how long it runs jobs without a break before it
// yields the processor (see share). A look costs a read of the clock, under
// 2 ns a job; a yield a trip through the scheduler.
const (
	shareEvery = 16
	shareAfter = 250 * time.Microsecond
)

// share yields the processor once the worker has run jobs without a break
// for shareAfter, to the other workers (and goroutines) waiting for one:
// Go preempts a goroutine only after 10 ms, and a worker whose backlog
// never empties would otherwise keep its processor that long while other
// workers, one perhaps holding a job handed to it, wait, and the workers
// would share the jobs unevenly.
func (w *worker[T]) share() {
	w.streak = 0
	now := time.Now()
	switch {
	case w.since.IsZero():
		w.since = now
	case now.Sub(w.since) >= shareAfter:
		w.since = now
		runtime.Gosched()
	}
}
