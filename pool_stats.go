package crew

import "github.com/crewlib/crew/internal/sched"

// PoolStats is a snapshot of a pool's counters, from Pool.Stats, its
// batches' jobs included (those a batch's job ran inline too), and the
// retired workers' (Resize) in the totals. It counts the same jobs as the
// pool's Metrics: after Wait, Submitted, Completed, Failed, Panicked,
// Canceled and Dropped equal the Recorder's EventSubmitted,
// EventCompleted, EventFailed, EventPanicked, EventSkipped and
// EventDropped, and Replaced the Recorder's EventReplaced. The totals are
// read at one instant (Replaced just before); while the pool runs,
// PerWorker is read after them, at a second instant, so it may disagree
// with them by the few jobs that ended meanwhile. After Wait every figure
// is exact.
type PoolStats struct {
	Workers    int   // workers: those not retired by Resize
	Queued     int   // jobs waiting to be dispatched: in the backlog, or behind their key (WithKey) or at their worker (WithConsistentHash)
	Running    int   // jobs dispatched (taken by a worker, or granted to one) and not ended (Inline ones aside)
	Blocked    int   // Submits blocked on the full pool
	Submitted  int64 // jobs accepted: Completed + Canceled + Dropped + Queued + Running
	Completed  int64 // jobs that ran, failed or not (Inline ones too)
	Failed     int64 // jobs that returned an error, panicked or called runtime.Goexit (see below)
	Panicked   int64 // jobs that panicked
	Canceled   int64 // jobs skipped because the pool's context (or, for a batch's job, its batch's) was done when they would have been dispatched (the Recorder's EventSkipped counts the same jobs)
	Dropped    int64 // jobs a backlog mailbox evicted (DropOldest)
	Inline     int64 // jobs submitted by a job of the pool, or of one of its batches, while it was full, so run inline
	Backlogged int64 // jobs that waited in the backlog, rather than going straight to an idle worker
	Keys       int   // keys with a job dispatched now (WithKey)
	Replaced   int64 // workers whose goroutine a runtime.Goexit (a job's, say) ended, each taken on at once by a new goroutine

	// Adaptive is the state of the size's controller, and why the size
	// last changed (WithAdaptiveSize); zero without it.
	Adaptive AdaptiveStats

	// A job that runs a job inline (see Submit) ends with it if that job
	// calls runtime.Goexit: both count in Failed, as in Completed.

	// PerWorker has one entry per worker, in order, to show the balance
	// (the retired ones are left out: see Resize).
	PerWorker []WorkerStats
}

// WorkerStats is one worker's part of PoolStats.
type WorkerStats struct {
	Name    string // the worker's name: the pool's name, "-", its index
	Queued  int    // jobs queued at this worker (WithConsistentHash)
	Handled int64  // jobs it ran, and those they ran inline; a batch's job's inline ones count in the totals alone, for its batch's jobs share one context, which names no worker
}

// Stats returns a snapshot of the pool's counters, its batches' jobs
// included. It takes the pool's scheduler's lock twice: for the totals,
// in O(1), then for the jobs each worker handled, in O(workers); and it
// allocates the PerWorker slice.
func (p *Pool[T]) Stats() PoolStats {
	if p == nil || p.refused == nil {
		p.unmade("Pool.Stats")
	}
	c := p.s.Counts()
	s := PoolStats{
		Workers: c.Live, Queued: c.Queued, Running: c.Running, Blocked: c.Blocked,
		Completed: c.Completed + c.Inline, Failed: c.Failed, Panicked: c.Panicked,
		Canceled: c.Canceled, Dropped: c.Dropped, Inline: c.Inline,
		Backlogged: c.Backlogged, Keys: c.Keys, Replaced: p.replaced.Load(),
	}
	s.Submitted = s.Completed + s.Canceled + s.Dropped + int64(s.Queued+s.Running)
	if p.adapt != nil {
		s.Adaptive = p.adapt.stats()
	}
	per := p.s.PerWorker(make([]sched.WorkerCount, 0, s.Workers))
	s.PerWorker = make([]WorkerStats, len(per))
	for i, w := range per {
		s.PerWorker[i] = WorkerStats{Name: w.Name, Queued: w.Queued, Handled: w.Handled + w.Inline}
	}
	return s
}
