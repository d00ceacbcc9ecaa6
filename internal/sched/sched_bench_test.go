package sched

import (
	"testing"
)

type owner struct{}

// BenchmarkOfferNext offers a job to a scheduler of one worker, which ends
// its last job and takes the new one, on one goroutine: the scheduler's
// own cost per job, its lock included, without a goroutine switch. The
// baseline is a ring under one lock taken as the scheduler takes its own
// (the bench program's floor, reduced to its two critical sections).
func BenchmarkOfferNext(b *testing.B) {
	job := func() {}
	b.Run("scheduler", func(b *testing.B) {
		b.ReportAllocs()
		var s Scheduler[func(), *owner]
		s.Init(Config[func(), *owner]{Workers: 1, PerWorker: 1 << 20})
		w := s.Workers()[0]
		s.Offer(job, s.Own(), MayWait, 0, nil)
		s.Next(w, false, 0, 0, nil)
		for b.Loop() {
			s.Offer(job, s.Own(), MayWait, 0, nil)
			s.Next(w, true, 0, 0, nil)
		}
	})
	b.Run("single-lock-ring", func(b *testing.B) {
		b.ReportAllocs()
		r := &lockedRing{ring: make([]func(), 16)}
		for b.Loop() {
			r.push(job)
			r.pop()
		}
	})
}

// lockedRing is a ring of jobs under the scheduler's kind of lock.
type lockedRing struct {
	mu      lock
	ring    []func()
	head, n int
}

//go:noinline
func (r *lockedRing) push(job func()) {
	r.mu.Lock()
	if r.n < len(r.ring) {
		i := r.head + r.n
		if i >= len(r.ring) {
			i -= len(r.ring)
		}
		r.ring[i] = job
		r.n++
	}
	r.mu.Unlock()
}

//go:noinline
func (r *lockedRing) pop() func() {
	r.mu.Lock()
	var job func()
	if r.n > 0 {
		job, r.ring[r.head] = r.ring[r.head], nil
		if r.head++; r.head == len(r.ring) {
			r.head = 0
		}
		r.n--
	}
	r.mu.Unlock()
	return job
}
