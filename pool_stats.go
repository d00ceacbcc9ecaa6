package crew

// PoolStats is a snapshot of a pool's counters, from Pool.Stats, its
// batches' jobs included (but for those a batch's job ran inline: see
// BatchStats), and the retired workers' (Resize) in the totals. While the
// pool runs, the workers' counters are read one after another, not at one
// instant, so they may disagree by the few jobs that ended meanwhile; after
// Wait they are exact.
type PoolStats struct {
	Workers    int   // workers: those not ended by a job's runtime.Goexit, nor retired by Resize
	Queued     int   // jobs waiting to be dispatched: in the backlog, or behind their key (WithKey) or at their worker (WithConsistentHash)
	Running    int   // jobs dispatched and not ended (Inline ones aside)
	Submitted  int64 // jobs accepted: Completed + Canceled + Dropped + Queued + Running
	Completed  int64 // jobs that ran, failed or not (Inline ones too)
	Failed     int64 // jobs that returned an error, panicked or called runtime.Goexit
	Panicked   int64 // jobs that panicked
	Canceled   int64 // jobs skipped because the pool's context (or, for a batch's job, its batch's) was done when they would have been dispatched
	Dropped    int64 // jobs a backlog mailbox evicted (DropOldest), or left with a worker that died
	Inline     int64 // jobs submitted by a job of the pool while it was full, so run inline
	Backlogged int64 // jobs that waited in the backlog, rather than going straight to an idle worker
	Keys       int   // keys with a job dispatched now (WithKey)

	// PerWorker has one entry per worker, in order, to show the balance:
	// the dead ones too, until Resize takes them out.
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
	defer d.mu.Unlock()
	s := PoolStats{PerWorker: make([]WorkerStats, len(d.workers))}
	// An inline job counts in Inline and Completed once it ended: read
	// those first, so that one ending meanwhile is not counted in the rest
	// (the rest is counted under this lock, with held).
	var goneInline int64 // of the retired workers not yet forgotten
	for i, w := range d.workers {
		inline := w.inline.Load()
		s.PerWorker[i] = WorkerStats{Name: w.ref.name, Handled: inline}
		s.Inline += inline
		if !w.goexit {
			s.Workers++
		}
	}
	for _, w := range d.gone {
		goneInline += w.inline.Load()
	}
	s.Inline += goneInline
	held := d.held
	s.Queued = d.queued()
	s.Backlogged, s.Dropped = d.backlogged, d.dropped
	if d.keys != nil {
		s.Keys = d.keys.active()
	}
	for i, w := range d.workers {
		s.PerWorker[i].Queued = w.own.n
		s.PerWorker[i].Handled += w.handled
		s.Canceled += w.canceled
		s.Failed += w.failed.Load()
		s.Panicked += w.panicked.Load()
		s.Completed += s.PerWorker[i].Handled
	}
	s.Completed += goneInline
	for _, w := range d.gone {
		s.Completed += w.handled
		s.Canceled += w.canceled
		s.Failed += w.failed.Load()
		s.Panicked += w.panicked.Load()
	}
	r := d.retired
	s.Completed += r.handled + r.inline
	s.Inline += r.inline
	s.Canceled += r.canceled
	s.Failed += r.failed + p.exits.Load()
	s.Panicked += r.panicked
	s.Running = max(held-s.Queued, 0)
	s.Submitted = s.Completed + s.Canceled + s.Dropped + int64(held)
	return s
}

// retiredStats is what the workers that Resize retired did, once they have
// exited (see Resize).
type retiredStats struct {
	handled, canceled, inline, failed, panicked int64
}
