package crew

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/sourcegraph/conc/panics"
)

// A worker is one of the pool's actors and its counters, read by Stats.
// handled, canceled and stolen are written by the worker's goroutine alone,
// with a plain store; the others also by the goroutines of its jobs, whose
// own Submits on a full pool run inline on them, so they are added to
// atomically.
type worker[T any] struct {
	pool   *Pool[T]
	ref    *Ref[T]
	ctx    context.Context // the pool's context, marked as this worker's
	index  int
	victim int // where steal looks first; only the worker's goroutine uses it

	handled, failed, panicked, canceled, inline, stolen atomic.Int64
	_                                                   [32]byte // 128 bytes in all
}

// workerKey marks the context a worker hands its jobs, so that a job's
// Submit to its own pool is recognised (see Submit).
type workerKey struct{}

// run is the worker's handler: it runs one job and accounts for it.
func (w *worker[T]) run(_ context.Context, job T) error {
	p := w.pool
	if p.ctx.Err() != nil {
		// The pool's context is done: the job is not started, only counted.
		w.canceled.Store(w.canceled.Load() + 1)
		if p.sink != nil {
			p.sink(DeadLetter{Message: job, Target: w.ref.name, Reason: context.Cause(p.ctx)})
		}
		w.finish(job)
		return nil
	}
	w.call(job, true)
	return nil
}

// finish counts out a job of this worker's load (and, in a keyed pool, of
// its key and the pool's count).
func (w *worker[T]) finish(job T) {
	p := w.pool
	w.ref.load.Add(-1)
	if p.keys != nil {
		p.keyMu.Lock()
		p.keys.release(job)
		p.keyMu.Unlock()
		p.kpending.Add(-1)
	}
	p.settle()
}

// steal runs one job queued for another worker, if there is one, and
// reports whether it did. The worker calls it when it finds its own mailbox
// empty, before it waits: an idle worker takes over a job stuck behind a
// slow one, and a worker that keeps finding work keeps running, instead of
// parking while its siblings are woken one job at a time.
func (w *worker[T]) steal() bool {
	if !w.pool.started.Load() {
		return false
	}
	ws := w.pool.workers
	for k := range len(ws) {
		// Start with the last worker robbed: while the submitters keep
		// feeding it, it is where the next job is.
		j := w.victim + k
		if j >= len(ws) {
			j -= len(ws)
		}
		if j == w.index {
			continue
		}
		v := ws[j].ref
		if v.mb.Len() == 0 {
			continue
		}
		job, ok := v.mb.Dequeue()
		if !ok {
			continue
		}
		// Move the job's weight from the victim's load to this worker's
		// while it runs, so that strategies see where it is. The victim has
		// room again: hand it to a blocked Submit.
		w.ref.load.Add(1)
		if w.pool.closed.Load() {
			w.pool.moves.Add(1) // see Pool.moves
		}
		v.load.Add(-1)
		w.pool.settle()
		w.stolen.Store(w.stolen.Load() + 1)
		w.victim = j
		_ = w.run(w.ctx, job) // counts the job out of this worker's load
		return true
	}
	return false
}

// runInline runs a job submitted by one of the pool's jobs on a full pool,
// on the submitting goroutine (the worker's or one its job started); it
// was never counted in, and counts in inline, not handled.
func (w *worker[T]) runInline(job T) {
	w.call(job, false)
}

// call runs the job, records its error or panic, and counts it out if it
// was counted in. The deferred function also runs when the job calls
// runtime.Goexit, which ends the worker: its actor then reports that to
// workerError and sends its queued jobs to deadLetter.
func (w *worker[T]) call(job T, counted bool) {
	defer func() {
		if v := recover(); v != nil {
			w.panicked.Add(1)
			r := panics.NewRecovered(1, v)
			w.fail(r.AsError())
		}
		if counted {
			w.handled.Store(w.handled.Load() + 1)
			w.finish(job)
		} else {
			w.inline.Add(1)
		}
	}()
	if err := w.pool.handle(w.ctx, job); err != nil {
		w.fail(err)
	}
}

func (w *worker[T]) fail(err error) {
	w.failed.Add(1)
	w.pool.record(err)
}

// record keeps err for Wait and cancels the pool's context on the first
// error if it should.
func (p *Pool[T]) record(err error) {
	p.mu.Lock()
	first := p.err == nil
	if first {
		p.err = err
	}
	if p.allErrors && (first || !p.noise(err)) {
		p.errs = append(p.errs, err)
	}
	p.mu.Unlock()
	if first && p.cancelOnError {
		p.cancel(err)
	}
}

// noise reports whether err only echoes the end of the pool's context, as
// the jobs still running when the first error canceled it tend to return.
func (p *Pool[T]) noise(err error) bool {
	return p.ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// workerError receives what a worker's actor reports; the jobs' own errors
// and panics are recorded by call, so this only sees a job's Goexit.
func (p *Pool[T]) workerError(err error) { p.record(err) }

// deadLetter counts out a job a worker's mailbox discarded (a DropOldest
// mailbox of the user's) or left behind when its worker died.
// The actor counted the job out of its load before.
func (p *Pool[T]) deadLetter(d DeadLetter) {
	p.dropped.Add(1)
	if p.keys != nil {
		p.keyMu.Lock()
		p.keys.release(d.Message.(T))
		p.keyMu.Unlock()
		p.kpending.Add(-1)
	}
	if p.sink != nil {
		p.sink(d)
	} else {
		logDeadLetter(d)
	}
	p.settle()
}

// workerIndex reports the worker's index in its pool (for tests).
func (w *worker[T]) workerIndex() int { return w.index }
