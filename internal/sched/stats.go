package sched

import (
	"fmt"
	"strings"
)

// What the pool reads of its scheduler for Stats and its gauges, each
// snapshot at one instant, under the lock; and what tests read.

// Counts is a snapshot of a pool's scheduling counters, its batches' jobs
// included.
type Counts struct {
	Ended
	Inline     int64 // jobs that ran inline (see RanInline)
	Held       int   // jobs accepted and not ended: Queued + Running
	Queued     int   // jobs accepted and not dispatched yet, wherever they wait
	Running    int   // jobs dispatched and not ended
	Blocked    int   // Submits blocked on the full pool
	Live       int   // workers but the retired ones
	Backlogged int64 // jobs that waited in a flow, rather than going straight to an idle worker
	Keys       int   // keys with a job dispatched now (WithKey)
}

// Counts returns a snapshot of the pool's counters, in O(1).
func (s *Scheduler[T, B]) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := Counts{
		Ended: s.done, Inline: s.inline.Load(),
		Held: s.held, Queued: s.held - s.running,
		Running: s.running, Blocked: s.nblocked, Live: len(s.workers),
		Backlogged: s.queuedIn,
	}
	if s.keyed != nil {
		c.Keys = s.keyed.Len() - s.order.len() // a key in the order has no job running
	}
	return c
}

// A WorkerCount is one worker's part of the pool's Stats.
type WorkerCount struct {
	Name    string
	Handled int64 // jobs it ran
	Inline  int64 // jobs the pool's own jobs it ran ran inline
	Queued  int   // jobs queued at it (WithConsistentHash)
}

// PerWorker appends to dst each worker's counts (but the retired ones'),
// in order, the jobs each ran read at one instant, in O(workers), and
// returns dst.
func (s *Scheduler[T, B]) PerWorker(dst []WorkerCount) []WorkerCount {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.workers {
		dst = append(dst, WorkerCount{Name: w.Name, Handled: w.handled, Inline: w.Inline.Load(), Queued: w.pinned.Len()})
	}
	return dst
}

// BatchCounts is a snapshot of a batch's scheduling counters.
type BatchCounts struct {
	Ended
	Inline  int64 // jobs that ran inline (see RanInline)
	Queued  int   // jobs accepted and not dispatched yet
	Running int   // jobs dispatched and not ended
	RunTime int64 // fair shares: the run time (ns) of its jobs that ended
	Limit   int   // the most of its jobs running at once (OpenBatch's limit), or 0
}

// BatchCounts returns a snapshot of b's counters, in O(1).
func (s *Scheduler[T, B]) BatchCounts(b *Owner[T, B]) BatchCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return BatchCounts{
		Ended:   b.done,
		Inline:  b.inline.Load(),
		Queued:  b.flow.waiting,
		Running: b.flow.running,
		RunTime: b.ran,
		Limit:   b.flow.limit,
	}
}

// Plain reports whether the pool queues its own jobs in the scheduler's
// order, with no backlog mailbox and no keys: only such a pool takes
// batches.
func (s *Scheduler[T, B]) Plain() bool { return s.own.flow.mb == nil && s.keyed == nil && s.pin == nil }

// Pinned reports whether the pool pins its keys to workers
// (WithConsistentHash).
func (s *Scheduler[T, B]) Pinned() bool { return s.pin != nil }

// The following are for tests.

// Idle reports how many workers are idle.
func (s *Scheduler[T, B]) Idle() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nidle
}

// Tenants reports how many tenants' shares have a batch not finished, and
// how many rest (fair shares).
func (s *Scheduler[T, B]) Tenants() (active, resting int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.fair.tenants) - s.fair.resting.Len(), s.fair.resting.Len()
}

// VT reports the virtual time of b's share (fair shares).
func (s *Scheduler[T, B]) VT(b *Owner[T, B]) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return b.flow.share.vt
}

// FairLeftovers says what the fair order still holds, once every batch
// was finished and the pool drained: "" if nothing.
func (s *Scheduler[T, B]) FairLeftovers() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	fq, own := s.fair, s.own.flow.share
	var left []string
	if n := len(fq.tenants) - fq.resting.Len(); n > 0 {
		left = append(left, fmt.Sprintf("%d tenants", n))
	}
	if fq.resting.Len() > restingTenants {
		left = append(left, fmt.Sprintf("%d resting tenants", fq.resting.Len()))
	}
	if fq.bank < 0 || fq.bank > fq.bankCap || fq.lent > 1e-3 || fq.lent < -1e-3 || fq.holders != 0 || fq.plain != 0 {
		left = append(left, fmt.Sprintf("a bank of %v, of at most %v; %v ns of credit lent, to %d shares; %d runnable shares without credit counted", fq.bank, fq.bankCap, fq.lent, fq.holders, fq.plain))
	}
	if own.running != 0 || own.queued != 0 || own.waiting.Len() > 0 {
		left = append(left, fmt.Sprintf("the pool's own share: %d running, %d queued", own.running, own.queued))
	}
	return strings.Join(left, "; ")
}

// BlockedInLine counts the Submits in line, list by list: what Counts'
// Blocked counts as they come and go.
func (s *Scheduler[T, B]) BlockedInLine() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.blocked.Len()
	if s.fair != nil {
		s.fair.eachBlocked(func(sh *share[T, B]) { n += sh.waiting.Len() })
	}
	return n
}
