package crew

import (
	"context"
	"errors"
	"iter"
	"sync/atomic"
)

// Ordered streams as iterators: MapSeq and MapSeqBatch yield f's results
// in the order of their inputs as they become ready, holding at most a
// window of inputs whose results are not yielded. Each stream runs on a
// pool of its own (MapSeq) or as one batch of a shared pool, through its
// Submit and Wait, and reuses one job per slot of its window: it
// allocates per stream, not per input.

// MapSeq calls f on each of inputs on a pool of workers goroutines, and
// yields the results in the order of inputs, each as soon as it and every
// result before it are ready: Map for a pipeline, whose first results are
// written while later inputs are still read or run. It reads inputs
// lazily, as the range loop consumes results: it holds at most the window
// (see WithWindow; by default DefaultWindowPerWorker × workers) of inputs
// whose results it has not yielded, so memory stays bounded however many
// inputs there are and however slow one of them is. The loop's goroutine
// both reads the inputs and yields the results: while the inputs'
// iterator blocks for its next input, results that are ready wait for it.
//
// Each time the returned iterator is ranged over, it starts a pool, reads
// inputs from their start and waits for the pool before the loop ends:
// no goroutine outlives the loop. Breaking out of the loop cancels the
// context of the calls in progress (their results are discarded) and skips
// the inputs taken and not yet started.
//
// The first error (or panic, as an error that errors.As unwraps to
// *panics.ErrRecovered) cancels the context f receives, which derives from
// ctx, as Map's does: the inputs not yet started are skipped, and at most
// one more is read. The results before it in input order are still
// yielded (every input before one that started has started, as in Map);
// then one pair with R's zero value and the error of the first input, in
// input order, that did not succeed, which ends the iteration. That error is the
// input's own, or, for an input skipped or stopped by the end of ctx,
// context.Cause(ctx), as Map reports it. To go on past failed inputs,
// return each one's error inside R rather than as f's error.
//
// MapSeq takes the options of its pool (WithName, WithStrategy,
// WithErrorHandler, WithoutPanicRecovery, WithMetrics) and WithWindow. It
// panics if ctx, inputs or f is nil, or workers is not between 1 and
// 1<<24. f's call on an input synchronizes before the yield of its
// result: R needs no locking.
func MapSeq[T, R any](ctx context.Context, workers int, inputs iter.Seq[T], f func(context.Context, T) (R, error), opts ...Option) iter.Seq2[R, error] {
	checkSeq("MapSeq", ctx, inputs, f)
	checkWorkers("MapSeq", workers)
	o := collect(opts)
	o.only("MapSeq", streamPoolOpts)
	return func(yield func(R, error) bool) {
		r := newSeqRun(ctx, ownHost(ctx, workers, o), f)
		defer r.end()
		r.run(inputs, yield)
	}
}

// MapSeqBatch is MapSeq on the shared pool p, as one batch: MapBatch's
// ordered stream. The batch's context derives from ctx; its first error
// cancels it, as in MapSeq, but neither the pool nor another batch. The
// window is by default DefaultWindowPerWorker times p's workers when the
// loop begins, or times the batch's limit if WithLimit gives fewer. If p is
// closed (its Wait or Shutdown has begun), the pair in the place of the
// first input holds an error that errors.Is matches with ErrPoolClosed; if
// p skips the batch's queued inputs (its own context ended), the stream
// ends with the reason in the place of the first of them. opts are
// WithWindow and the batch's (WithLimit, WithTenant and WithWeight: see
// NewBatch). It panics if ctx, p, inputs or f is nil, or if p takes no
// batches (see NewBatch).
func MapSeqBatch[T, R any](ctx context.Context, p *Pool[Job], inputs iter.Seq[T], f func(context.Context, T) (R, error), opts ...Option) iter.Seq2[R, error] {
	checkSeq("MapSeqBatch", ctx, inputs, f)
	if p == nil {
		panic("crew: MapSeqBatch: nil pool")
	}
	p.takesBatches("MapSeqBatch")
	o := collect(opts)
	o.only("MapSeqBatch", streamBatchOpts)
	return func(yield func(R, error) bool) {
		r := newSeqRun(ctx, batchHost(ctx, p, o), f)
		defer r.end()
		r.run(inputs, yield)
	}
}

// checkSeq panics, naming fn, if ctx, inputs or f is nil.
func checkSeq[T, R any](fn string, ctx context.Context, inputs iter.Seq[T], f func(context.Context, T) (R, error)) {
	switch {
	case ctx == nil:
		panic("crew: " + fn + ": nil context")
	case inputs == nil:
		panic("crew: " + fn + ": nil inputs")
	case f == nil:
		panic("crew: " + fn + ": nil function")
	}
}

// errBroke is the cause of a stream's end when its range loop ended early.
var errBroke = errors.New("crew: the range loop over the ordered stream ended")

// A seqSlot is one place of an ordered stream's window: an input taken,
// then its result.
type seqSlot[T, R any] struct {
	in   T
	out  R
	err  error
	done atomic.Bool // f's call on in has ended: out and err are the loop's
	job  Job         // calls f on in: submitted for each input the slot holds, made with the slot
}

// A seqRun is one range loop over an ordered stream. The loop's goroutine
// takes the inputs, submits them and yields the results; the jobs write
// their slots and mark them done, and wake the loop if it waits for the
// slot. The loop finds a result ready without a lock or a channel, and
// sleeps only when the oldest result is not.
type seqRun[T, R any] struct {
	ctx  context.Context // the caller's
	host streamHost      // the stream's pool (MapSeq), or its batch (MapSeqBatch): the first error, or ctx's end, ends its jobs' context
	f    func(context.Context, T) (R, error)

	win        *chain[seqSlot[T, R]]
	head, tail place[seqSlot[T, R]] // the oldest input taken and not yet yielded, and where the next goes
	held       int                  // the inputs taken and not yet yielded
	waited     bool                 // wait returned: every input taken has ended or been skipped
	waitErr    error                // what wait returned
	over       bool                 // the iteration ended: an error was yielded, or yield returned false

	waiting atomic.Pointer[seqSlot[T, R]] // the slot the loop waits for, or nil
	wake    chan struct{}                 // wakes the loop once the slot it waits for is done
}

func newSeqRun[T, R any](ctx context.Context, host streamHost, f func(context.Context, T) (R, error)) *seqRun[T, R] {
	r := &seqRun[T, R]{ctx: ctx, host: host, f: f, wake: make(chan struct{}, 1)}
	r.win, r.tail = newChain(host.window, func(s *seqSlot[T, R]) {
		s.job = func(ctx context.Context) error { return r.call(ctx, s) }
	})
	r.head = r.tail
	return r
}

// call is the job of slot s: it calls f on s's input, and keeps the result
// and error in s for the loop, which s.done lets read them.
// A panic is recovered here rather than by the pool, so that s holds it
// (as the error the pool would have made of it) and the pool still counts
// it as a panic.
func (r *seqRun[T, R]) call(ctx context.Context, s *seqSlot[T, R]) (err error) {
	returned := false
	defer catch(&returned, !r.host.noRecovery, "job", func(e error, panicked bool) {
		if r.host.noRecovery {
			return // a panic on its way to crash the process, or runtime.Goexit: the pool fails the job, and drain finds it not done
		}
		if panicked {
			err = e
		}
		s.err = e // a runtime.Goexit goes on; the pool sees it too
		r.finish(s)
	})
	s.out, err = r.f(ctx, s.in)
	s.err, returned = err, true
	r.finish(s)
	return err
}

// finish marks s done, handing it to the loop, and wakes the loop if it
// waits for s. The loop stores waiting before it loads done, and finish
// stores done before it loads waiting: one of them sees the other's
// store, so the loop never sleeps on a slot that is done.
func (r *seqRun[T, R]) finish(s *seqSlot[T, R]) {
	s.done.Store(true) // the loop owns s from here; finish compares its address only
	if r.waiting.Load() == s {
		select {
		case r.wake <- struct{}{}:
		default: // a wake is pending already
		}
	}
}

// run takes inputs and yields their results, until inputs end or the
// iteration does.
func (r *seqRun[T, R]) run(inputs iter.Seq[T], yield func(R, error) bool) {
	inputs(func(in T) bool {
		if r.over {
			return false // an iterator that goes on after yield returned false
		}
		if r.waited { // the jobs' context ended when every input taken was done
			r.fail(yield, r.unrun())
			return false
		}
		s, after := r.win.fill(r.tail)
		s.in = in
		if err := r.host.submit(r.host.base, s.job); err != nil {
			r.refuse(yield, err)
			return false
		}
		r.tail = after
		r.held++
		// Yield what is ready, and wait for room in the window before
		// reading the next input: the stream holds at most the window.
		for r.ready() || r.held == r.host.window {
			if !r.next(yield) {
				return false
			}
		}
		return true
	})
	for !r.over && r.held > 0 {
		if !r.next(yield) {
			return
		}
	}
}

// ready reports whether the oldest result not yet yielded is ready,
// without waiting.
func (r *seqRun[T, R]) ready() bool {
	return r.held > 0 && r.win.at(r.head).done.Load()
}

// next yields the oldest result not yet yielded, once ready, and reports
// whether the iteration goes on. If the jobs' context ends first, it waits
// for the jobs, yields the results ready before the first that is not, and
// an error in that one's place.
func (r *seqRun[T, R]) next(yield func(R, error) bool) bool {
	s := r.win.at(r.head)
	for !s.done.Load() {
		r.waiting.Store(s)
		if s.done.Load() {
			r.waiting.Store(nil)
			break
		}
		select {
		case <-r.wake: // s is done, or a wake left from an earlier wait: look again
		case <-r.host.jobs.Done():
			r.waiting.Store(nil)
			return r.drain(yield)
		}
		r.waiting.Store(nil)
	}
	return r.yield(s, yield)
}

// yield yields the result of s, the oldest one not yet yielded, which is
// done, and reports whether the iteration goes on.
func (r *seqRun[T, R]) yield(s *seqSlot[T, R], yield func(R, error) bool) bool {
	out, err := s.out, s.err
	var zero T
	var none R
	s.in, s.out, s.err = zero, none, nil // the slot holds nothing for the collector once its result is out
	s.done.Store(false)
	r.win.pass(&r.head)
	r.held--
	if err != nil {
		r.fail(yield, r.causeOf(err))
		return false
	}
	if !yield(out, nil) {
		r.over = true
		return false
	}
	return true
}

// drain waits for the jobs, then yields the results done before the first
// input taken that is not, and an error in that one's place, which ends
// the iteration. It reports whether the iteration goes on: only if every
// input taken succeeded.
func (r *seqRun[T, R]) drain(yield func(R, error) bool) bool {
	if !r.waited {
		r.waitErr, r.waited = r.host.wait(), true
	}
	for r.held > 0 {
		s := r.win.at(r.head)
		if !s.done.Load() { // skipped
			r.fail(yield, r.unrun())
			return false
		}
		if !r.yield(s, yield) {
			return false
		}
	}
	return true
}

// refuse ends the iteration once Submit refused an input (err): it yields
// the results done before, and an error in the place of the first input
// that did not succeed, the refused one at the latest.
func (r *seqRun[T, R]) refuse(yield func(R, error) bool, err error) {
	err = whyRefused(err, r.host.jobs, r.host.pool) // before drain, whose wait ends the batch's context
	if r.drain(yield) {
		r.fail(yield, r.causeOf(err))
	}
}

// unrun is the error in the place of an input skipped, or not taken,
// once the jobs' context ended: why it ended.
func (r *seqRun[T, R]) unrun() error {
	err := r.waitErr
	if err == nil {
		err = context.Cause(r.ctx)
	}
	if err == nil {
		err = context.Cause(r.host.jobs)
	}
	return r.causeOf(err)
}

// causeOf is err, or why the jobs' context ended if err only echoes that
// end (an input stopped by ctx's end, or by another input's error, which
// is then the cause), as Map reports it.
func (r *seqRun[T, R]) causeOf(err error) error {
	if echoes(err, r.host.jobs) {
		return context.Cause(r.host.jobs)
	}
	return err
}

// fail yields err in the place of the oldest result not yet yielded, and
// ends the iteration.
func (r *seqRun[T, R]) fail(yield func(R, error) bool, err error) {
	r.over = true
	var none R
	yield(none, err)
}

// end ends the stream as its loop ends, however it ends: it cancels the
// jobs still running or queued, and waits for them.
func (r *seqRun[T, R]) end() {
	r.host.stop(errBroke)
	if !r.waited {
		r.waited = true
		r.waitErr = r.host.wait()
	}
}
