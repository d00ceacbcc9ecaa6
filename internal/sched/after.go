package sched

import (
	"runtime"
	"sync"

	"github.com/crewlib/crew/internal/queue"
)

// The scheduler's lock, and what a critical section leaves for once it is
// released.

// An after is what a critical section leaves for once the lock is
// released: workers to wake, each holding the job granted to it (linked
// through them), blocked Submits to answer (their Err is set), and the jobs
// the backlog evicted to dead-letter.
type after[T, B any] struct {
	grants    *Worker[T, B]
	replies   queue.Chain[queue.Waiter[task[T, B]]]
	evictions bool // the backlog evicted jobs
}

// grant leaves g for worker w, which was idle, to wake to.
func (a *after[T, B]) grant(w *Worker[T, B], g Grant[T, B]) {
	w.job, w.nextGrant = g, a.grants
	a.grants = w
}

// reply leaves w's answer, in w.Err, to be sent.
func (a *after[T, B]) reply(w *queue.Waiter[task[T, B]]) { a.replies.Push(&w.Links) }

// run does what the critical section left in a, if anything. s.mu is not
// held.
func (s *Scheduler[T, B]) run(a *after[T, B]) {
	if a.grants != nil || !a.replies.Empty() || a.evictions {
		s.runAll(a)
	}
}

func (s *Scheduler[T, B]) runAll(a *after[T, B]) {
	for w := a.grants; w != nil; {
		next := w.nextGrant
		w.nextGrant = nil
		w.wake <- struct{}{} // its job is in w.job
		w = next
	}
	a.grants = nil
	for w := a.replies.Pop(); w != nil; w = a.replies.Pop() {
		w.Signal()
	}
	if a.evictions {
		a.evictions = false
		s.evictions()
	}
}

// Refusals are blocked Submits taken off the scheduler, to be refused
// once its lock is released.
type Refusals[T, B any] struct {
	c queue.Chain[queue.Waiter[task[T, B]]]
}

// Refuse answers each of the Submits with err.
func (r *Refusals[T, B]) Refuse(err error) {
	for w := r.c.Pop(); w != nil; w = r.c.Pop() {
		w.Msg = task[T, B]{}
		w.Answer(err)
	}
}

// A lock is the scheduler's lock: a sync.Mutex that a goroutine finding it
// held yields its processor to once, and takes again if it has been
// released meanwhile, before it parks on it as on any mutex. The
// scheduler holds its lock for queue work only, a few dozen nanoseconds,
// so the holder has often let go once the processor came back: with
// GOMAXPROCS above the CPUs, most of the cost of a plain sync.Mutex is its
// waiters parking and being woken. It never yields twice: a holder that
// the OS has descheduled costs a waiter one trip through the scheduler,
// then the waiter parks (and shows in the mutex profile).
type lock struct{ m sync.Mutex }

func (l *lock) Lock() {
	if l.m.TryLock() {
		return
	}
	runtime.Gosched()
	if l.m.TryLock() {
		return
	}
	l.m.Lock()
}

func (l *lock) Unlock() { l.m.Unlock() }
