// Package sched is the scheduler of crew's worker pools: the one place that
// decides which job runs where and when. It holds the jobs not dispatched
// yet, in flows (the pool's own jobs, each batch's, each key's), the order
// that picks among the flows (first come, first served, or fair shares),
// the idle workers, the Submits blocked on a full pool, and the records of
// workers and batches that these decisions read and write. One lock guards
// all of it and is taken in this package only: a pool, its batches and its
// workers reach the scheduler through its methods, each of which takes the
// lock once, and keep only what their own goroutine owns.
//
// Under the lock the scheduler does queue work only: O(1), or O(log flows)
// to pick a flow among several. What follows a decision (waking a worker,
// answering a blocked Submit, delivering dead letters) runs once the lock
// is released (see after). In a first-come-first-served pool with no keys
// and no backlog mailbox, while it sees no stop and is not closing, a
// Submit and a worker's end-and-take run a fast lane: the same decisions,
// with every branch that cannot apply left out (see lane.go); with the
// jobs of the pool's own and of batches without a limit alone, which all
// queue in the pool's own queue (see flow), Offer and Next decide in a
// few lines of their own, without the order. A pool with fair shares has
// a lane of its own in the same state (see fairlane.go).
//
// The guarantees, for a pool with the default backlog:
//
//   - A job is dispatched when Offer hands it to an idle worker, which
//     happens only while no runnable flow has a job waiting, or when a
//     worker takes it, which every worker does before it goes idle. Across
//     flows, jobs are dispatched in the order they were queued (each is
//     numbered as it is); within a flow, in its order. So a job whose Offer
//     returned before another's began is dispatched first, among the jobs
//     that may run (a flow at its limit, a busy key, may not). With fair
//     shares, the flows are grouped in shares, and the share furthest
//     behind goes first (see fairness); within a share, jobs go in the
//     order they were queued.
//   - Once a dispatch sees the pool's context done (Stop, or a stop error
//     passed in), it and every later one skip their job, and Offer refuses:
//     no job is skipped while a job dispatched after it runs.
//   - held counts the jobs accepted and not ended, wherever they are. A
//     job's end is counted under the lock after its handler returned (after
//     its dead letter, for one that never ran), so the channel Shut returns
//     is closed after the end of every job accepted before Shut and of
//     every job those submitted.
//   - Blocked Submits wait in FIFO order (with fair shares, in their shares,
//     which take turns); the room a job's end frees goes to the first of
//     them, before any new Offer can take it.
package sched

import (
	"context"
	"sync/atomic"

	"github.com/crewlib/crew/internal/keys"
	"github.com/crewlib/crew/internal/queue"
)

// A Scheduler is a pool's scheduler for jobs of type T; B is the pool's
// owner type (whose jobs these are: the pool's own, or a batch's), which
// the scheduler keeps for the pool's own jobs (Config.Own) and for each
// batch (OpenBatch), and hands back with each of their jobs
// (Grant.Owner). The zero Scheduler is not
// usable: a pool makes one with Init. All its methods are safe for
// concurrent use.
type Scheduler[T, B any] struct {
	mu lock // guards the fields below but those set by Init, and the records (flows, batches, shares, workers) whose fields say so

	// What every job reads or writes, laid out for the fast lane: the
	// lock and the counts on one cache line (for a Scheduler that starts
	// on a line, as a Pool's does); the pool's own flow (its queue and
	// counts) on the next ones, followed by the rest of its record, which
	// the pool's own jobs leave alone; then the order and the counts of
	// ends.
	lane     bool   // the fast lane is open: see reopen
	fairLane bool   // the fair lane is open: see reopen
	stamp    bool   // jobs carry when they were accepted (WithMetrics, no backlog mailbox)
	held     int    // jobs accepted and not ended
	limit    int    // the most jobs held at once; 0: no bound of the pool's own
	running  int    // jobs dispatched and not ended
	seq      uint64 // the number of the last job queued (or Submit blocked, with fair shares)
	nblocked int    // the Submits blocked
	nidle    int    // the workers in idle

	own      Owner[T, B] // the pool's own jobs: its flow first, on lines of its own
	order    order[T, B] // the runnable flows but the pool's own (batches, keys)
	done     Ended       // the jobs that ended (counted with held)
	queuedIn int64       // jobs that waited in a flow rather than going straight to an idle worker
	idle     idleSet     // the workers waiting for a job

	blocked queue.List[queue.Waiter[task[T, B]]] // Submits blocked on a full pool, oldest first (with fair shares, in their shares instead)
	now     int64                                // the latest reading of the pool's clock reported (WithMetrics): what admitted Submits are stamped with

	// Set by Init, then only read.
	fair      *fairness[T, B]            // fair shares, or nil
	keyed     *keys.Table[T, flow[T, B]] // WithKey: a flow per key with jobs, each with a limit of 1
	pin       keys.Pin[T]                // WithConsistentHash: jobs queue at their key's worker
	perWorker int                        // the bound per worker (see Config), which Resize keeps
	name      string                     // Config.Name
	onLost    func([]Grant[T, B]) int64  // Config.OnLost
	bufs      *queue.Slabs[queued[T, B]]

	workers  []*Worker[T, B]         // every worker but the retired ones, in order
	stop     error                   // the cause of the pool context's end, once a dispatch saw it
	drained  chan struct{}           // made by Shut; closed once no job is held
	ownSkips int64                   // the pool's own jobs skipped (batches count theirs)
	batches  queue.List[Owner[T, B]] // the batches not finished yet (see WaitBatch), for Shutdown
	evicted  []T                     // jobs the backlog evicted, waiting for their dead letters

	free queue.Waiters[task[T, B]] // for blocked Submits: recycled outside the lock, taken under it

	inline atomic.Int64 // the jobs that ran inline (see RanInline), counted without the lock, away from the lines it guards
}

// Config is what a pool tells its scheduler as it makes it (Init).
type Config[T, B any] struct {
	// Workers is how many workers the pool starts with.
	Workers int
	// PerWorker bounds the pool at Workers×PerWorker jobs held (running or
	// waiting), a bound that follows the workers as Resize changes them; 0
	// sets no bound of the pool's own, and so does a product too large for
	// an int (see bound).
	PerWorker int
	// FirstIdle returns where to start looking for an idle worker among n,
	// given next, the worker after the one last chosen: the pool's
	// Strategy. Without it, the idle workers get jobs in turn, from next.
	FirstIdle func(next, n int) int
	// Fair makes the pool share its workers between batches by run time.
	Fair bool
	// FairWindow, with Fair, is the most run time (ns) per unit of weight
	// that a share which used less than its part lately is credited (see
	// fairness.place); 0: none.
	FairWindow int64
	// Keys, for WithKey, gives each key with jobs a flow of its own.
	Keys keys.Index[T]
	// Pin, for WithConsistentHash, queues each job at its key's worker.
	Pin keys.Pin[T]
	// Backlog, for WithMailbox, holds and orders the pool's own jobs.
	Backlog Mailbox[T]
	// Stamp makes every job carry when it was accepted (Offer's at, or for a
	// Submit that blocked, the latest clock reading reported).
	Stamp bool
	// OnLost delivers the dead letters of jobs that will never run, those
	// the backlog mailbox evicted, once the lock is released, and returns
	// the pool's clock (WithMetrics), or 0. The scheduler counts the jobs
	// out once it returns, or once a dead-letter sink ends the goroutine.
	OnLost func(lost []Grant[T, B]) (now int64)
	// Own is the owner of the pool's own jobs, which their grants carry
	// (see Own).
	Own B
	// Name is the pool's name, which its workers' names begin with.
	Name string
}

// A Mailbox is the backlog of a pool made WithMailbox, called under the
// scheduler's lock: crew's Mailbox, as the scheduler uses it.
type Mailbox[T any] interface {
	Enqueue(ctx context.Context, msg T) error
	Dequeue() (msg T, ok bool)
	Len() int
}

// A dropper is a backlog that reports what it discards: crew's Dropper.
type dropper[T any] interface {
	OnDrop(hook func(msg T, reason error))
}

// Init makes s the scheduler c describes, with c.Workers workers, none of
// them idle yet: each becomes idle as its goroutine first calls Next. It
// holds the lock meanwhile, so that a Counts called at once (a metrics
// scrape) sees it made, or not yet.
func (s *Scheduler[T, B]) Init(c Config[T, B]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bufs = queue.Shared[queue.Slabs[queued[T, B]]]()
	s.order = newOrder[T, B]()
	s.own.flow = flow[T, B]{q: queue.RingOf(s.bufs), owner: c.Own, fifo: !c.Fair}
	s.perWorker, s.name = c.PerWorker, c.Name
	s.limit = bound(c.Workers, c.PerWorker)
	s.onLost, s.stamp = c.OnLost, c.Stamp
	s.idle.firstIdle = c.FirstIdle
	if c.Fair {
		s.fair = newFairness(&s.own.flow, c.FairWindow, c.Workers, s.limit)
	}
	if c.Keys != nil {
		s.keyed = keys.NewTable(c.Keys, func(slot int) *flow[T, B] {
			return &flow[T, B]{limit: 1, q: queue.RingOf(s.bufs), key: slot, owner: c.Own}
		})
	}
	s.pin = c.Pin
	if c.Backlog != nil {
		s.own.flow.mb = c.Backlog
		if d, ok := c.Backlog.(dropper[T]); ok {
			// The hook runs inside Enqueue, under the lock: keep the job
			// for its dead letter, delivered once the lock is released.
			d.OnDrop(func(job T, _ error) { s.evicted = append(s.evicted, job) })
		}
	}
	s.workers = make([]*Worker[T, B], c.Workers)
	for i := range s.workers {
		s.workers[i] = newWorker[T, B](i, c.Name)
	}
	s.idle.init(c.Workers)
	s.reopen()
}

// Workers returns the workers, in order: those Init made, for the pool to
// start their goroutines.
func (s *Scheduler[T, B]) Workers() []*Worker[T, B] {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.workers
}

// Offer takes job, of owner b (the pool's own, or a batch), into the pool
// if it can, and returns the Verdict. at is when the pool accepted it
// (Config.Stamp), stop the end of the pool's context if the caller saw it.
//
// A job's own Submit (FromJob) is accepted after Shut began and, beyond
// the bound, for a keyed pool or a batch with a limit; it never waits, and
// the caller runs its job inline when Offer says Full. When the pool is
// full, a Submit that may wait is queued in line, and Offer returns
// Waiting with its Ticket. A backlog mailbox (or a key function) that
// panics takes nothing, and the panic goes on, with the lock released.
func (s *Scheduler[T, B]) Offer(job T, b *Owner[T, B], mode Mode, at int64, stop error) (Verdict, Ticket[T, B], error) {
	own := &s.own
	s.mu.Lock()
	if !s.lane || stop != nil || s.held >= s.limit || s.nblocked > 0 || b != own && (b.closed() || b.seesDone()) {
		if s.fairLane && stop == nil && s.held < s.limit && s.nblocked == 0 && (b == own || !b.closed() && !b.seesDone()) {
			s.fairOffer(job, b, at)
			return Accepted, Ticket[T, B]{}, nil
		}
		return s.offerSlow(job, b, mode, at, stop)
	}
	// The fast lane, with room.
	s.held++
	f := &b.flow
	if !f.fifo {
		// A job of a batch with a limit.
		var a after[T, B]
		s.lanePlace(task[T, B]{job: job, f: f, at: at}, &a)
		s.mu.Unlock()
		s.run(&a)
		return Accepted, Ticket[T, B]{}, nil
	}
	// A job of the pool's own or of a batch without a limit (fifo): what
	// lanePlace does, flat.
	if s.nidle > 0 && own.flow.q.Len() == 0 && len(s.order.h) == 0 {
		w := s.takeIdle()
		s.running++
		if b != own {
			f.running++
		}
		w.job = Grant[T, B]{job: job, f: f, at: at}
		if s.stamp {
			w.start = max(at, s.now)
		}
		s.mu.Unlock()
		w.wake <- struct{}{}
		return Accepted, Ticket[T, B]{}, nil
	}
	s.seq++
	own.flow.q.Push(queued[T, B]{job: job, seq: s.seq, at: at, f: f})
	f.waiting++
	s.queuedIn++
	s.mu.Unlock()
	return Accepted, Ticket[T, B]{}, nil
}

// What a worker does after next.
type step int8

const (
	runNext step = iota // run (or skip) the job next gave it
	park                // wait for a grant: the worker is idle
	retire              // exit: Resize retired the worker
)

// Next counts out the job w holds, if ended (it ran, or was skipped), then
// gives w its next job: one queued at it (WithConsistentHash), else the
// next of the order. With none, w waits until it is granted one. Next
// reports false once w is to exit: Dismiss stopped it, or Resize retired
// it. ran is the run time of the job that ended, if w timed it (see
// Timed); now, the pool's clock as it ended (WithMetrics; 0 if none);
// stop, the end of the pool's context, if the worker saw it.
func (s *Scheduler[T, B]) Next(w *Worker[T, B], ended bool, ran, now int64, stop error) (*Grant[T, B], bool) {
	own := &s.own.flow
	s.mu.Lock()
	var front *queue.Waiter[task[T, B]] // the oldest blocked Submit
	if s.nblocked > 0 {
		front = s.blocked.Front()
	}
	if s.lane && stop == nil && !w.retired && len(s.order.h) == 0 &&
		(!ended || w.job.f == own || w.job.f.fifo) && (front == nil || front.Msg.f == own || front.Msg.f.fifo && !front.Msg.f.batch.seesDone()) {
		// The fast lane, with the jobs of the pool's own and of batches
		// without a limit alone, all in the pool's own queue: what
		// laneNext does, flat (the order's heap is empty, and read in
		// place). The lane is open, so no dispatch saw a stop: a job of
		// the pool's own was not skipped.
		if s.stamp {
			s.tick(now)
		}
		admitted := false
		if ended {
			if w.job.f == own {
				s.running--
				s.held--
				s.done.Completed++
				if w.failure != NoFailure {
					s.done.failed(w.failure)
					w.failure = NoFailure
				}
				w.handled++
			} else {
				// A fifo batch's: what countOut does, flat (no limit to
				// settle). Its batch counts it out, and its Wait may
				// return.
				f := w.job.f
				b := f.batch
				skipped := w.job.skip != noSkip
				f.running--
				s.running--
				s.held--
				s.done.ended(skipped, w.failure)
				b.done.ended(skipped, w.failure)
				if !skipped {
					w.handled++
				}
				w.failure = NoFailure
				if b.pending {
					s.release(b)
				}
			}
			if front != nil && s.held < s.limit {
				// The room goes to the oldest blocked Submit: no worker
				// is idle on a full pool, so its job joins the queue.
				s.blocked.Remove(&front.Links)
				s.nblocked--
				t := &front.Msg
				if s.stamp {
					t.at = max(t.at, s.now) // accepted now
				}
				s.held++
				s.seq++
				own.q.Push(queued[T, B]{job: t.job, seq: s.seq, at: t.at, f: t.f})
				t.f.waiting++
				s.queuedIn++
				*t = task[T, B]{}
				admitted = true
			}
		}
		st := park
		if own.q.Len() > 0 {
			e, _ := own.q.Pop()
			f, skip := e.f, noSkip
			f.waiting--
			if f != own {
				f.running++
				if f.batch.seesDone() {
					skip = batchStopped
				}
			}
			s.running++
			w.job = Grant[T, B]{job: e.job, f: f, at: e.at, skip: skip}
			if s.stamp {
				w.start = max(e.at, s.now)
			}
			st = runNext
		} else {
			w.job = Grant[T, B]{}
			s.addIdle(w.index)
		}
		s.mu.Unlock()
		if admitted {
			front.Signal() // let in: its Err is nil
		}
		return s.nextStep(w, st)
	}
	return s.nextSlow(w, ended, ran, now, stop)
}

// Resume finishes, on a goroutine that took w's place, the Next that a
// runtime.Goexit interrupted on w's last goroutine once the lock was
// released (in a dead-letter sink): w runs the job Next gave it, or waits
// for one, or exits, as Next decided.
func (s *Scheduler[T, B]) Resume(w *Worker[T, B]) (*Grant[T, B], bool) {
	return s.nextStep(w, w.pending)
}

// nextStep takes step st of Next: w runs the job it holds, or waits for
// one, or exits.
func (s *Scheduler[T, B]) nextStep(w *Worker[T, B], st step) (*Grant[T, B], bool) {
	w.waited = st == park
	switch st {
	case retire:
		return nil, false
	case park:
		if _, ok := <-w.wake; !ok {
			return nil, false
		}
	}
	return &w.job, true
}
