package crew

import (
	"context"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/conc/panics"
)

// A worker is one of a pool's goroutines. It runs the jobs the dispatcher
// gives it: after each job, in the same turn of the dispatcher's lock that
// counts the job out, it takes the next (see dispatcher.next); finding
// none, it parks on its channel, where the dispatcher sends it the job it
// grants an idle worker. The pool starts it, and it ends when Wait closes
// its channel, when Resize retires it, or when a job calls
// runtime.Goexit.
type worker[T any] struct {
	pool  *Pool[T]
	ctx   context.Context // the pool's context, marked as this worker's
	name  string          // the pool's name, "-", its index
	index int
	jobs  chan grant[T] // cap 1: the job granted to the worker while it was idle; closed to stop it

	// Guarded by the dispatcher's lock.
	pinned    ring[task[T]] // WithConsistentHash: the jobs queued at this worker
	granted   grant[T]      // the job granted, until it is sent (see after)
	nextGrant *worker[T]    // the next worker with a grant to send
	dead      bool          // a job called runtime.Goexit, ending the worker
	retired   bool          // Resize retired it: it exits once it has run the jobs it holds
	charged   float64       // WithFairShare: what the job it holds cost its share as it was dispatched (see fairness.charge)
	timed     bool          // WithFairShare: the worker times that job; read by the worker once the job is its own

	handled atomic.Int64 // jobs it ran (inline ones too)
	inline  atomic.Int64 // jobs its jobs ran inline
	queued  atomic.Int64 // the length of pinned, for Stats

	// Used by the worker's goroutine only.
	streak int       // jobs run since the worker was idle, or since yield last looked
	since  time.Time // when yield began to time the worker's streak
	ran    int64     // the run time (ns) of the job it holds, if timed; read by the dispatcher as the job ends, on this goroutine
	now    int64     // WithMetrics: the pool's clock as the worker's last job ended; read by the dispatcher in next (see dispatcher.now)
	began  int64     // WithMetrics: when the job it holds started
	_      [64]byte  // keeps workers off each other's cache lines
}

// workerKey marks the context a worker hands its jobs, so that a job's
// Submit to its own pool is recognised (see Submit).
type workerKey struct{}

func newWorker[T any](p *Pool[T], i int) *worker[T] {
	w := &worker[T]{pool: p, index: i, name: p.name + "-" + strconv.Itoa(i), jobs: make(chan grant[T], 1)}
	w.ctx = context.WithValue(p.ctx, workerKey{}, w)
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
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("crew.pool", p.name, "crew.worker", strconv.Itoa(w.index))))
	epoch := time.Now()     // what the worker times jobs from (see timed)
	var start time.Duration // when g's job started, since epoch, if it is timed
	var g grant[T]          // the job the worker holds: dispatched to it, and run once started is set
	started := false        // g's job started: next counts it out
	returned := false       // the loop returned, rather than a runtime.Goexit ending the goroutine
	defer func() {
		if !returned { // a job called runtime.Goexit (a panic is recovered), or a dead-letter sink did
			switch {
			case started && p.rec != nil && g.skip == noSkip:
				w.ended(g)
			case started && w.timed:
				w.ran = int64(time.Since(epoch) - start)
			}
			w.died(g, started)
		}
	}()
	for {
		var a after[T]
		next, s := p.d.next(w, g, started, p.seesStop(), &a)
		g, started = next, false
		a.run(p) // may call a dead-letter sink
		switch s {
		case retire:
			returned = true
			return
		case park:
			w.streak, w.since = 0, time.Time{}
			var ok bool
			if g, ok = <-w.jobs; !ok { // stopped by Wait, or retired while idle
				returned = true
				return
			}
		}
		started = true
		switch {
		case p.rec != nil:
			w.measure(g)
			continue
		case !w.timed:
			w.do(g)
			continue
		}
		// Since reads the monotonic clock alone, for a Time that holds
		// its reading: half the cost of Now.
		start = time.Since(epoch)
		w.do(g)
		w.ran = int64(time.Since(epoch) - start)
	}
}

// give sends the worker its grant; it is idle, and its channel empty.
func (w *worker[T]) give() {
	g := w.granted
	w.granted = grant[T]{}
	w.jobs <- g
}

// queue queues t at the worker (WithConsistentHash). d.mu is held.
func (w *worker[T]) queue(t task[T]) {
	w.pinned.push(t)
	w.queued.Store(int64(w.pinned.n))
}

// unqueue removes the oldest job queued at the worker. d.mu is held.
func (w *worker[T]) unqueue() task[T] {
	t, _ := w.pinned.pop()
	w.queued.Store(int64(w.pinned.n))
	return t
}

// do runs g's job, or skips it.
func (w *worker[T]) do(g grant[T]) {
	b := g.t.f.batch
	if g.skip != noSkip {
		sink := w.pool.sink
		if b != nil {
			sink = b.sink
		}
		if r := w.pool.rec; r != nil {
			r.Add(EventSkipped, 1) // before the sink, which may call runtime.Goexit
		}
		if sink != nil {
			sink(DeadLetter{Message: g.t.job, Target: w.name, Reason: g.reason(w.pool)})
		}
		return
	}
	if w.streak++; w.streak == yieldEvery {
		w.yield()
	}
	defer w.finish(b)
	ctx := w.ctx
	if b != nil {
		ctx = &b.jobCtx
	}
	if err := w.pool.handle(ctx, g.t.job); err != nil {
		w.pool.fail(err, b)
	}
}

// finish records the panic of a job of batch b (nil: of the pool), if it
// panicked, and counts the job as handled. It also runs when the job
// calls runtime.Goexit.
func (w *worker[T]) finish(b *Batch[T]) {
	if !w.pool.noRecovery { // else a panic goes on, and crashes the process
		if v := recover(); v != nil {
			w.pool.fail(panicked("job", panics.NewRecovered(1, v)), b)
		}
	}
	w.handled.Add(1)
}

// runInline runs a job that one of the pool's jobs submitted while the
// pool was full, on the submitting goroutine; it was never counted in.
func (w *worker[T]) runInline(job T) {
	returned := false
	defer w.finishInline(&returned)
	if err := w.pool.handle(w.ctx, job); err != nil {
		w.pool.fail(err, nil)
	}
	returned = true
}

// finishInline records the panic, or the runtime.Goexit (returned is
// false), of a job run inline, and counts it. A Goexit goes on to end the
// job that ran it, which fails too (see died).
func (w *worker[T]) finishInline(returned *bool) {
	var v any
	if !w.pool.noRecovery { // else a panic goes on, and crashes the process
		v = recover()
	}
	switch {
	case v != nil:
		w.pool.fail(panicked("job", panics.NewRecovered(1, v)), nil)
	case !*returned: // a Goexit (or, WithoutPanicRecovery, a panic on its way to crash the process)
		w.pool.fail(&actorError{name: w.name, err: errGoexit}, nil)
	}
	w.handled.Add(1)
	w.inline.Add(1)
	w.pool.inline.Add(1)
}

// died takes the worker out of its pool once runtime.Goexit ended its
// goroutine: in g's job if started (the Goexit fails it, and its batch or
// the pool), else in a dead-letter sink, before g's job, if any, started
// (the Goexit fails the pool). The jobs left with the worker become dead
// letters.
func (w *worker[T]) died(g grant[T], started bool) {
	p := w.pool
	var b *Batch[T]
	if started {
		b = g.t.f.batch
	}
	p.fail(&actorError{name: w.name, err: errGoexit}, b)
	var a after[T]
	lost := p.d.bury(w, g, started, &a)
	a.run(p)
	p.deadLetters(lost, w.name, errGoexit)
}

// workerIndex reports the worker's index in its pool (for tests).
func (w *worker[T]) workerIndex() int { return w.index }

// yieldEvery is how many jobs a worker runs between two looks at the
// clock, and yieldAfter how long it runs jobs without a break before it
// yields the processor (see yield). A look costs a read of the clock, under
// 2 ns a job; a yield a trip through the scheduler.
const (
	yieldEvery = 16
	yieldAfter = 250 * time.Microsecond
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
}
