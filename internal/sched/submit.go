package sched

import (
	"context"
	"errors"
	"fmt"

	"github.com/crewlib/crew/internal/queue"
)

// The submitting side of the scheduler: a job offered is handed to an idle
// worker, or queued in its flow, or, on a full pool, its Submit waits in
// line for room (see blocked.go), or it is refused.

// Mode is how a job is offered.
type Mode int8

const (
	MayWait Mode = iota // Submit: it waits in line when the pool is full
	NoWait              // TrySubmit: refused (Full) when the pool is full
	FromJob             // a job's own Submit: see Offer
)

// A Verdict is what the scheduler made of a job offered to it.
type Verdict int8

const (
	Accepted     Verdict = iota // the pool holds the job
	Waiting                     // the pool is full, and the Submit waits in line: see Await
	Full                        // the pool is full, and the Submit may not wait
	Shut                        // the pool's Shut began
	Stopped                     // the pool's context is done (Stop, or a stop passed in)
	Refused                     // the backlog mailbox refused the job: see the error
	BatchShut                   // the batch's Close began
	BatchStopped                // the batch's context is done
	noWaiter                    // the pool is full, and no waiter was at hand: Offer makes one, and offers again
)

// A Ticket is a Submit waiting in line for room in a full pool (Waiting),
// to pass to Await or Withdraw.
type Ticket[T, B any] struct{ w *queue.Waiter[task[T, B]] }

// errWouldBlock is what a flow's mailbox says when it is full and would
// block.
var errWouldBlock = errors.New("crew: the backlog mailbox is full")

// offerSlow is Offer beyond the fast lane's common case. s.mu is held,
// and released.
func (s *Scheduler[T, B]) offerSlow(job T, b *Owner[T, B], mode Mode, at int64, stop error) (Verdict, Ticket[T, B], error) {
	t := task[T, B]{job: job, f: &b.flow, at: at}
	for {
		var a after[T, B]
		v, w, err := s.offer(t, mode, stop, &a)
		s.run(&a)
		if v != noWaiter {
			return v, Ticket[T, B]{w}, err
		}
		s.free.Put(queue.NewWaiter[task[T, B]]()) // the first Submit to block on this processor: make it a waiter, and offer again
		s.mu.Lock()
	}
}

// offer is Offer under the lock, which it releases, also if a mailbox or
// key function panics.
func (s *Scheduler[T, B]) offer(t task[T, B], mode Mode, stop error, a *after[T, B]) (Verdict, *queue.Waiter[task[T, B]], error) {
	defer s.mu.Unlock()
	s.noteStop(stop)
	b := t.f.batch
	switch {
	case s.drained != nil && (mode != FromJob || s.isDrained()):
		// A job's own Submit is let in while some job runs: after the pool
		// drained, it comes from a goroutine a job left behind.
		return Shut, nil, nil
	case s.stop != nil:
		return Stopped, nil, nil
	case b != nil && b.closed() && (mode != FromJob || b.held() == 0):
		return BatchShut, nil, nil
	case b != nil && b.seesDone():
		return BatchStopped, nil, nil
	}
	full := s.limit > 0 && s.held >= s.limit || s.nblocked > 0
	if s.fair != nil && s.limit > 0 && mode != FromJob {
		full = s.fairFull(t.f.share)
	}
	if full {
		switch {
		case mode == MayWait:
			return s.enlist(t)
		case mode == NoWait, s.keyed == nil && s.pin == nil && t.f.limit == 0:
			return Full, nil, nil // for a job's own Submit, run it inline: blocking could deadlock
		}
		// A keyed job runs after its key's jobs, and a limited batch's job
		// within its limit, so never inline: it goes beyond the bound.
	}
	switch err := s.place(t, a); {
	case err == errWouldBlock && mode == MayWait:
		return s.enlist(t)
	case err == errWouldBlock:
		return Full, nil, nil
	case err != nil:
		return Refused, nil, err
	}
	return Accepted, nil, nil
}

// place accepts t: it hands t to an idle worker if t may run now and no
// job waits before it, else queues it in its flow (or at its key's
// worker, with a pin). Only a backlog mailbox fails: errWouldBlock when it
// is full and would block, or the error it refused the job with; then t
// is not accepted. s.mu is held.
func (s *Scheduler[T, B]) place(t task[T, B], a *after[T, B]) error {
	if s.keyed != nil {
		t.f = s.keyed.Get(t.job)
	}
	switch f := t.f; {
	case s.pin != nil:
		w := s.workers[s.pin.Place(t.job, len(s.workers), up)]
		w.pinned.Push(t)
		if s.idle.has(w.index) {
			s.removeIdle(w.index)
			a.grant(w, s.pinned(w))
		}
	case s.fair != nil:
		s.fairPlace(t, a)
	case f.mb == nil:
		s.lanePlace(t, a)
	case s.nidle > 0 && s.first() == nil && f.free():
		// Workers take from the order before they go idle: if one is idle,
		// no job may run before t.
		w := s.takeIdle()
		a.grant(w, s.dispatched(t, noSkip, w))
	default:
		n := len(s.evicted)
		switch err := f.mb.Enqueue(canceledCtx, t.job); {
		case err == context.Canceled:
			return errWouldBlock // a Backpressure mailbox that is full
		case err != nil:
			return err
		}
		if len(s.evicted) > n {
			a.evictions = true
		}
		s.queuedIn++
	}
	s.held++
	return nil
}

// canceledCtx makes a backlog mailbox that would block return at once.
var canceledCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// A callbackPanic is the panic of a function of the user's that the
// scheduler calls as it accepts a job, the key function of WithKey or a
// backlog mailbox's, raised while it let a blocked Submit in: on the
// goroutine of the job whose end made room, where it would crash the
// process. It goes to the blocked Submit instead, which raises it (see
// raise).
type callbackPanic struct{ v any }

func (c callbackPanic) Error() string { return fmt.Sprint("crew: panic while admitting a job: ", c.v) }

// raise raises a callbackPanic as the panic it was, on the goroutine of
// the Submit it reached; it returns any other err.
func raise(err error) error {
	if c, ok := err.(callbackPanic); ok {
		panic(c.v)
	}
	return err
}

// placeBlocked places the job of a blocked Submit, t, as place does. A
// panic of the key function or of the backlog mailbox, which take nothing
// when they panic, is returned as a callbackPanic. s.mu is held.
func (s *Scheduler[T, B]) placeBlocked(t task[T, B], a *after[T, B]) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = callbackPanic{v}
		}
	}()
	return s.place(t, a)
}

// Await waits until the pool accepts or refuses the job of the Submit in
// line as tk, and returns nil or the refusal: the pool's Stop or Shut
// refuse it with the error they were given, the batch's Close or
// StopBatch with theirs. If ctx ends first, it takes the Submit out of
// line and returns ctx.Err(), unless the pool decided first. A panic of
// the user's callbacks while the job was let in is raised here.
func (s *Scheduler[T, B]) Await(ctx context.Context, tk Ticket[T, B]) error {
	w := tk.w
	done := ctx.Done()
	if done == nil { // a context that never ends: a receive costs less than a select
		err := w.Outcome()
		s.free.Put(w)
		return raise(err)
	}
	select {
	case <-done:
		if decided, err := s.Withdraw(tk); decided {
			return err
		}
		return ctx.Err()
	case <-w.Ready():
		err := w.Received()
		s.free.Put(w)
		return raise(err)
	}
}

// Withdraw takes the Submit in line as tk out, unless the pool decided
// first: then it reports decided, with the decision (raising a panic of
// the user's callbacks as Await does).
func (s *Scheduler[T, B]) Withdraw(tk Ticket[T, B]) (decided bool, err error) {
	w := tk.w
	s.mu.Lock()
	if w.Links.Listed() {
		s.unblock(w)
		w.Msg = task[T, B]{}
	} else {
		decided = true
	}
	s.mu.Unlock()
	if decided {
		err = w.Outcome() // on its way to w
	}
	s.free.Put(w)
	return decided, raise(err)
}
