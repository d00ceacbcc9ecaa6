package crew

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// A StreamTask is a task of a Stream: it runs on one of the stream's
// workers, with the stream's context, and returns the callback the stream
// runs once this task and every task submitted before it have ended (nil
// for none), or an error.
type StreamTask = func(ctx context.Context) (callback func() error, err error)

// A Stream runs tasks on a pool, as many at once as the pool allows, and
// their callbacks one at a time, in the order the tasks were submitted,
// each as soon as its task and every earlier one have ended: the shape of
// a pipeline that processes records in parallel and writes the results in
// their input order. It is conc's stream with contexts, errors and a
// window of its own. Make one with NewStream (a pool of its own) or
// NewStreamBatch (one batch of a long-lived pool).
//
// The window (see WithWindow) bounds the tasks accepted and whose
// callbacks have not run: Submit blocks while it is full (and, once it
// found it full, until a quarter of it is free), so a slow task holds back
// at most that many results, and the memory they take.
//
// The first error (a task's error, a callback's error, or a panic in
// either, as an error that errors.As unwraps to *panics.ErrRecovered)
// cancels the stream's context, with that error as its cause: the tasks
// not yet started are skipped, and Submit refuses new ones. The callbacks
// of the tasks before the first task, in submission order, that failed
// still run, in order (every task submitted before one that started has
// started, as in a Pool), and none from that task on; a callback that
// fails is the last to run. Wait returns the first error.
//
// Callbacks run on the worker whose task ended last of those the callback
// waited for: a slow callback holds a worker, and delays the callbacks
// after it, but no other task. A task must not wait for its own stream
// (its Submit or Wait): the window or the workers could be full of tasks
// that wait.
//
// A Stream is safe for concurrent use: tasks submitted at once by several
// goroutines are ordered as their Submits take their turns. The zero
// Stream is not usable (every method panics, as a nil *Stream's do). The
// return of a task synchronizes before its callback runs; the callback of
// each task synchronizes before the callback of the next one; and every
// task and callback ends before Wait returns. Every stream must reach
// Wait.
type Stream struct {
	// Set as the stream is made, then only read.
	host   streamHost         // its pool (NewStream), or its batch (NewStreamBatch)
	caller context.Context    // what the tasks' context derives from
	win    *chain[streamSlot] // the tasks' slots, from the head to the tail
	room   chan struct{}      // signals a Submit waiting for room that callbacks ran
	hooks  *streamHooks       // tests only: holds a job where two deliverers race (see ended, deliver); nil otherwise

	// Written as the stream ends.
	refused atomic.Pointer[error] // why Submit refused a task once the stream was over (see refusal), for Wait
	gaveUp  atomic.Bool           // Submit refused a task as its own ctx ended (see refusal)
	closing atomic.Bool           // Wait has begun: Submit refuses with ErrBatchClosed, and counts nothing lost
	waited  sync.Once             // Wait's work, once
	result  error                 // what Wait returns, set once

	_ [64]byte // keeps what each Submit writes off the lines the jobs read

	// The turn to submit: a Submit that finds it taken counts itself in
	// turnWaiters, then tries again; one that gives the turn back loads
	// turnWaiters, and wakes one with turnFree.
	turn        sync.Mutex        // held by the Submit under way: guards next and tail
	turnWaiters atomic.Int32      // Submits waiting for the turn
	turnFree    chan struct{}     // signals the turn's release to a Submit waiting for it
	next        int64             // the sequence number of the next task accepted
	tail        place[streamSlot] // task next's slot

	// A Submit that finds the window full stores want, then waiting, then
	// loads head again; a run of callbacks stores head, then loads waiting,
	// then want: one of them sees the other's store, so no Submit sleeps on
	// the room it wants.
	want    atomic.Int64 // the head at which the Submit that waits wants waking: a quarter of the window free
	waiting atomic.Bool  // a Submit waits for room in the window

	_ [64]byte // keeps what the deliverers write off the Submits' lines

	// The callbacks run under the deliverer's role, which one job holds at
	// a time. A job whose task ended marks its slot ended, then tries for
	// the role if its task is the head's; a deliverer stores each new head
	// before it looks at its slot, and gives the role up, then looks again
	// at the slot where it stopped. So a slot marked while another job held
	// the role is seen, by that job or by the one that marked it.
	head       atomic.Int64      // the sequence number of the next callback to run; stored by the role's holder
	front      place[streamSlot] // the head's slot: the role's holder's
	delivering atomic.Bool       // the deliverer's role is held
	halted     atomic.Bool       // a callback failed (or ended its goroutine): no callback runs after it
}

// streamHooks, set by tests only, are called where a job that wants the
// deliverer's role and a deliverer that halts the stream race, so that a
// test can hold each there in turn.
type streamHooks struct {
	claiming func() // a job found its task the head's (or, having delivered, the slot it stopped at marked), and tries for the role
	halting  func() // a callback failed: its deliverer halts the stream
}

// A streamSlot holds one task of a Stream, then its callback.
type streamSlot struct {
	task  StreamTask
	seq   int64
	cb    func() error // the task's callback, once it ended
	ended atomic.Bool  // the task ended without an error: cb is its, for the deliverer's role to run
	job   Job          // runs the slot's task: submitted for each task the slot holds, made with the slot
}

// NewStream starts a Stream on a pool of workers goroutines of its own,
// whose tasks receive a context derived from ctx. Once ctx is done, the
// tasks not yet started are skipped and Submit refuses new ones. It takes
// WithWindow (by default DefaultWindowPerWorker × workers) and the options
// of its pool: WithName, WithStrategy, WithErrorHandler,
// WithoutPanicRecovery and WithMetrics. It panics if ctx is nil or workers
// is not between 1 and 1<<24.
func NewStream(ctx context.Context, workers int, opts ...Option) *Stream {
	if ctx == nil {
		panic("crew: NewStream: nil context")
	}
	checkWorkers("NewStream", workers)
	o := collect(opts)
	o.only("NewStream", streamPoolOpts)
	return newStream(ctx, ownHost(ctx, workers, o))
}

// NewStreamBatch starts a Stream as one batch of the shared pool p: its
// tasks are jobs of the batch, which shares p's workers and bound with
// the other batches, and receive the batch's context, which derives from
// ctx. The stream's first error cancels the batch, but neither the pool
// nor another batch. It takes WithWindow (by default
// DefaultWindowPerWorker times p's workers, or times the batch's limit if
// WithLimit gives fewer) and the batch's options: WithLimit, WithTenant and
// WithWeight (see NewBatch). Once p is closed (its Wait or Shutdown has
// begun), Submit returns an error that errors.Is matches with
// ErrPoolClosed; if p skips the batch's queued tasks (its own context
// ended), the stream ends with the reason. It
// panics if ctx or p is nil, or if p takes no batches (see NewBatch).
func NewStreamBatch(ctx context.Context, p *Pool[Job], opts ...Option) *Stream {
	if p == nil {
		panic("crew: NewStreamBatch: nil pool")
	}
	p.takesBatches("NewStreamBatch")
	if ctx == nil {
		panic("crew: NewStreamBatch: nil context")
	}
	o := collect(opts)
	o.only("NewStreamBatch", streamBatchOpts)
	return newStream(ctx, batchHost(ctx, p, o))
}

// newStream makes a stream whose tasks run as jobs of host, with a
// context that derives from ctx.
func newStream(ctx context.Context, host streamHost) *Stream {
	s := &Stream{
		host:     host,
		caller:   ctx,
		turnFree: make(chan struct{}, 1),
		room:     make(chan struct{}, 1),
	}
	s.win, s.tail = newChain(host.window, func(slot *streamSlot) {
		slot.job = func(ctx context.Context) error { return s.run(ctx, slot) }
	})
	s.front = s.tail
	return s
}

// Submit gives task to the stream, and returns nil once the stream holds
// it: it does not wait for the task to run, Wait does. Submit blocks while
// the window is full (see WithWindow): once it found it full, until a
// quarter of it is free (at least one place), so that a producer that
// outruns the workers is woken once per quarter window rather than once
// per task. It blocks while the pool is full too (for a stream on a
// shared pool), and takes its turn among the stream's blocked Submits. It
// returns ctx.Err() if ctx ends first, or at once if ctx is
// already done; once the stream's context is done (after its first error,
// say), that context's cause; once the stream's Wait has begun,
// ErrBatchClosed; and the pool's refusal (ErrPoolClosed for a shared pool
// whose Wait has begun). Submit panics if ctx or task is nil.
func (s *Stream) Submit(ctx context.Context, task StreamTask) error {
	if s == nil || s.host.submit == nil {
		s.unmade("Submit")
	}
	if ctx == nil {
		panic("crew: Stream.Submit: nil context")
	}
	if task == nil {
		panic("crew: Stream.Submit: nil task")
	}
	if err := ctx.Err(); err != nil {
		return s.refusal(ctx, err)
	}
	if err := s.take(ctx); err != nil {
		return err
	}
	defer s.giveTurn()
	if err := s.roomFor(ctx); err != nil {
		return err
	}
	slot, after := s.win.fill(s.tail)
	slot.task, slot.seq = task, s.next
	if err := s.host.submit(ctx, slot.job); err != nil {
		slot.task = nil
		return s.refusal(ctx, err)
	}
	s.tail = after
	s.next++
	return nil
}

// take takes the turn to submit, waiting while another Submit has it,
// unless ctx or the stream's context ends first.
func (s *Stream) take(ctx context.Context) error {
	if s.turn.TryLock() {
		return nil
	}
	s.turnWaiters.Add(1)
	defer s.turnWaiters.Add(-1)
	for !s.turn.TryLock() {
		select {
		case <-s.turnFree: // the turn was given back: try again (a signal left for a Submit that gave up only costs a try)
		case <-ctx.Done():
			return s.refusal(ctx, ctx.Err()) // which counts the task lost if the stream's context ended too
		case <-s.host.jobs.Done():
			return s.refusal(ctx, s.host.jobs.Err())
		}
	}
	return nil
}

// giveTurn gives the turn back, and wakes a Submit waiting for it. A
// Submit that waits counts itself before it tries for the turn, and
// giveTurn loads the count after it gives the turn back: a Submit that
// failed to take it is counted, and woken.
func (s *Stream) giveTurn() {
	s.turn.Unlock()
	if s.turnWaiters.Load() > 0 {
		select {
		case s.turnFree <- struct{}{}:
		default: // a signal is pending already
		}
	}
}

// roomFor waits, with the turn, until the window has room for task
// s.next, unless ctx or the stream's context ends first. Once it finds the
// window full, it sleeps until a quarter of it is free (at least a place):
// a producer ahead of the workers is woken once per quarter window, not
// once per task, and then submits that many at once.
func (s *Stream) roomFor(ctx context.Context) error {
	window := int64(s.host.window)
	for s.next-s.head.Load() >= window {
		s.want.Store(s.next - window + max(1, window/4)) // before waiting: see want
		s.waiting.Store(true)
		if s.next-s.head.Load() < window {
			s.waiting.Store(false)
			return nil
		}
		select {
		case <-s.room: // callbacks ran: look again (a signal left by a Submit that gave up only costs a look)
		case <-ctx.Done():
			return s.refusal(ctx, ctx.Err()) // which counts the task lost if the stream's context ended too
		case <-s.host.jobs.Done():
			return s.refusal(ctx, s.host.jobs.Err())
		}
	}
	return nil
}

// refusal is what Submit returns when it refuses a task: err, or the cause
// of the stream's context if err only echoes its end. A task refused
// because the stream is over (its context ended, or its pool closed) is
// lost to the stream, which keeps the reason for Wait; one
// refused because Submit's own ctx ended is too if the stream's ctx has
// ended by then (see Wait), and one refused because Wait began is not.
func (s *Stream) refusal(ctx context.Context, err error) error {
	switch {
	case s.closing.Load() || s.host.own && errors.Is(err, ErrPoolClosed):
		// Wait began (a NewStream's pool closes only as its Wait ends),
		// and its end cancels the stream's context: a Submit that ran
		// into it is refused as after Wait, not lost.
		return ErrBatchClosed
	case errors.Is(err, ErrBatchClosed):
		return err
	case errors.Is(err, ErrPoolClosed):
		s.lost(err)
		return err
	case s.host.jobs.Err() != nil:
		s.lost(context.Cause(s.host.jobs))
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return context.Cause(s.host.jobs)
	case ctx.Err() != nil:
		// Either the caller gave this task up and the stream goes on, or
		// ctx is (or derives from) what the stream's context derives from,
		// whose end has not reached the stream's context yet.
		s.gaveUp.Store(true)
		return ctx.Err()
	}
	s.lost(err) // any other refusal of the pool's
	return err
}

// lost keeps err as why the stream refused a task, unless it kept one
// already.
func (s *Stream) lost(err error) {
	s.refused.CompareAndSwap(nil, &err)
}

// lostReason returns why a task was refused and the stream never ran it:
// a reason lost kept, or, if Submit gave a task up as its ctx ended, the
// cause of the end of the stream's ctx by now; nil if neither. Wait calls
// it once every task has ended, so that a cancel seen by a Submit has
// reached the stream's ctx.
func (s *Stream) lostReason() error {
	if r := s.refused.Load(); r != nil {
		return *r
	}
	if s.gaveUp.Load() && s.caller.Err() != nil {
		return context.Cause(s.caller)
	}
	return nil
}

// Wait closes the stream to new tasks, waits until every task it accepted
// has ended (run, or been skipped once its context was done) and the
// callbacks that run have run, and returns the first error, as the
// stream's batch's Wait does (see Batch.Wait); for a stream of NewStream,
// it then stops its pool's workers. If ctx ended first, it returns
// context.Cause(ctx), also when a task returned ctx's own error because
// ctx ended. If no task failed but Submit refused a task because the
// stream was over (its context ended, or its pool closed), Wait returns
// why, as Map does: a loop that stops at Submit's error learns from Wait
// that tasks were never run. A task refused
// because Submit's own ctx ended counts only if the stream's ctx has
// ended too by the time Wait returns (else the caller gave that task up,
// and the stream went on); one refused because Wait had begun does not. Wait may be called more than once, from any
// goroutine but the stream's tasks and callbacks; every call returns the
// same. A Submit that runs into Wait returns ErrBatchClosed, and its task
// is not counted as lost.
func (s *Stream) Wait() error {
	if s == nil || s.host.submit == nil {
		s.unmade("Wait")
	}
	s.closing.Store(true) // before the pool's or the batch's Wait, which cancels the stream's context as it ends
	s.waited.Do(func() {
		err := s.host.wait()
		s.host.stop(nil) // releases the context the pool's, or the batch's, derives from
		_, s.result = results[struct{}](s.caller, nil, err, s.lostReason())
	})
	return s.result
}

// unmade panics, naming the stream's method: every method of a zero
// Stream does, and of a nil *Stream.
func (s *Stream) unmade(method string) {
	if s == nil {
		panic("crew: Stream." + method + ": nil Stream: make one with NewStream or NewStreamBatch")
	}
	panic("crew: Stream." + method + ": the Stream was not made by NewStream or NewStreamBatch: use one")
}
