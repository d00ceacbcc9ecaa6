package crew

// PoolStats is a snapshot of a pool's counters, from Pool.Stats. While the
// pool runs, its fields are read one after another, not at one instant, so
// they may disagree by the few jobs that moved meanwhile; after Wait they
// are exact.
type PoolStats struct {
	Workers   int   // worker goroutines
	Queued    int   // jobs waiting in the workers' mailboxes
	Running   int   // jobs running (but Inline ones), or on their way from Submit to a mailbox
	Submitted int64 // jobs accepted: Completed + Canceled + Dropped + Queued + Running
	Completed int64 // jobs that ran, failed or not (Inline ones too)
	Failed    int64 // jobs that returned an error or panicked
	Panicked  int64 // jobs that panicked
	Canceled  int64 // jobs skipped because the pool's context was done
	Dropped   int64 // jobs a mailbox discarded, or left behind by a worker that died
	Inline    int64 // jobs submitted by a job of the pool while it was full, so run inline
	Stolen    int64 // jobs an idle worker took from another's mailbox
	Keys      int   // keys bound to a worker now (WithKey)

	// PerWorker has one entry per worker, in order, to show the balance.
	PerWorker []WorkerStats
}

// WorkerStats is one worker's part of PoolStats.
type WorkerStats struct {
	Name    string // the worker's actor name: the pool's name, "-", its index
	Queued  int    // jobs waiting in its mailbox
	Handled int64  // jobs it ran (Inline and Stolen ones too)
}

// Stats returns a snapshot of the pool's counters. It takes no lock and
// costs O(workers); it allocates the PerWorker slice.
func (p *Pool[T]) Stats() PoolStats {
	s := PoolStats{Workers: len(p.workers), PerWorker: make([]WorkerStats, len(p.workers))}
	for i := range p.workers {
		w := &p.workers[i]
		ws := WorkerStats{Name: w.ref.name, Queued: w.ref.Len(), Handled: w.handled.Load() + w.inline.Load()}
		s.PerWorker[i] = ws
		s.Queued += ws.Queued
		s.Completed += ws.Handled
		s.Failed += w.failed.Load()
		s.Panicked += w.panicked.Load()
		s.Canceled += w.canceled.Load()
		s.Inline += w.inline.Load()
		s.Stolen += w.stolen.Load()
	}
	s.Dropped = p.dropped.Load()
	if p.keys != nil {
		s.Keys = p.keys.active()
	}
	// Read the count last: a job that finished after its worker's counters
	// were read is then missing from both, never counted twice.
	pending := p.pending()
	s.Running = max(int(pending)-s.Queued, 0)
	s.Submitted = s.Completed + s.Canceled + s.Dropped + pending
	return s
}
