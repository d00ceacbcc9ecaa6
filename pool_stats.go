package crew

import "slices"

// PoolStats is a snapshot of a pool's counters, from Pool.Stats, its
// batches' jobs included (but for those a batch's job ran inline: see
// BatchStats), and the retired workers' (Resize) in the totals. While the
// pool runs, the workers' counters are read one after another, not at one
// instant, so they may disagree by the few jobs that ended meanwhile; after
// Wait they are exact.
type PoolStats struct {
	Workers    int   // worker goroutines
	Queued     int   // jobs waiting to be dispatched: in the backlog, or behind their key (WithKey) or at their worker (WithConsistentHash)
	Running    int   // jobs dispatched and not ended (Inline ones aside)
	Submitted  int64 // jobs accepted: Completed + Canceled + Dropped + Queued + Running
	Completed  int64 // jobs that ran, failed or not (Inline ones too)
	Failed     int64 // jobs that returned an error, panicked or called runtime.Goexit
	Panicked   int64 // jobs that panicked
	Canceled   int64 // jobs skipped because the pool's context was done when they would have been dispatched
	Dropped    int64 // jobs a backlog mailbox evicted (DropOldest), or left with a worker that died
	Inline     int64 // jobs submitted by a job of the pool while it was full, so run inline
	Backlogged int64 // jobs that waited in the backlog, rather than going straight to an idle worker
	Keys       int   // keys with a job dispatched now (WithKey)

	// PerWorker has one entry per worker, in order, to show the balance.
	PerWorker []WorkerStats
}

// WorkerStats is one worker's part of PoolStats.
type WorkerStats struct {
	Name    string // the worker's actor name: the pool's name, "-", its index
	Queued  int    // jobs queued at this worker (WithConsistentHash), or handed to it and not started
	Handled int64  // jobs it ran (Inline ones too)
}

// Stats returns a snapshot of the pool's counters, its batches' jobs
// included. It holds the pool's lock for O(workers) and allocates the
// PerWorker slice.
func (p *Pool[T]) Stats() PoolStats {
	d := &p.d
	d.mu.Lock()
	workers := slices.Clone(d.workers)
	gone := slices.Clone(d.gone)
	d.mu.Unlock()
	s := PoolStats{Workers: len(workers), PerWorker: make([]WorkerStats, len(workers))}
	// An inline job counts in Inline and Completed once it ended: read
	// those first, so that one ending meanwhile is not counted in the rest.
	var goneInline, goneHandled int64 // of the retired workers not yet exited
	for i, w := range workers {
		inline := w.inline.Load()
		s.PerWorker[i] = WorkerStats{Name: w.ref.name, Handled: inline}
		s.Inline += inline
		s.Failed += w.failed.Load()
		s.Panicked += w.panicked.Load()
	}
	for _, w := range gone {
		goneInline += w.inline.Load()
		s.Failed += w.failed.Load()
		s.Panicked += w.panicked.Load()
	}
	s.Failed += p.exits.Load()
	// The rest is counted under the lock that counts jobs in and out.
	d.mu.Lock()
	held := d.held
	s.Queued = d.queued()
	s.Backlogged, s.Dropped = d.backlogged, d.dropped
	if d.keys != nil {
		s.Keys = d.keys.active()
	}
	for i, w := range workers {
		s.PerWorker[i].Queued = w.own.n
		s.PerWorker[i].Handled += w.handled
		s.Canceled += w.canceled
	}
	for _, w := range gone {
		goneHandled += w.handled
		s.Canceled += w.canceled
	}
	r := d.retired
	d.mu.Unlock()
	s.Inline += goneInline + r.inline
	s.Completed = goneInline + goneHandled + r.handled + r.inline
	s.Failed += r.failed
	s.Panicked += r.panicked
	s.Canceled += r.canceled
	for _, w := range s.PerWorker {
		s.Completed += w.Handled
	}
	s.Running = max(held-s.Queued, 0)
	s.Submitted = s.Completed + s.Canceled + s.Dropped + int64(held)
	return s
}

// retiredStats is what the workers that Resize retired did, once they have
// exited (see Resize).
type retiredStats struct {
	handled, canceled, inline, failed, panicked int64
}
