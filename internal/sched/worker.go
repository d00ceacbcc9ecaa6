package sched

import (
	"math/bits"
	"strconv"
	"sync/atomic"

	"github.com/crewlib/crew/internal/queue"
)

// The workers' side of the scheduler: a worker counts out the job it ended
// and takes its next one in one turn of the lock (Next), and finding none
// waits on its channel, where the scheduler wakes it once it has granted
// it a job.

// A Worker is the scheduler's record of one of the pool's workers. The
// pool runs a goroutine per Worker, which calls Next in a loop; each field
// says whose it is where it is not the scheduler's, under its lock.
type Worker[T, B any] struct {
	job       Grant[T, B]   // the job it holds: taken in Next, or granted while it was idle
	wake      chan struct{} // cap 1: signalled once a job is granted to the idle worker; closed to stop it
	index     int
	handled   int64         // jobs it ran (counted as they end)
	retired   bool          // Resize retired it: it exits once it has run the jobs it holds
	timed     bool          // fair shares: the worker times that job
	waited    bool          // its last Next waited for its job: the worker's goroutine's
	pending   step          // what its Next under way does once the lock is released (see Resume): the worker's goroutine's
	failure   Failure       // how the job it holds failed, if it did (see Fail): the worker's goroutine's until its Next counts it
	nextGrant *Worker[T, B] // the next worker to wake once the lock is released (see after)
	start     int64         // with Config.Stamp, when the job it holds was dispatched (see Start)

	pinned  queue.Ring[task[T, B]] // WithConsistentHash: the jobs queued at this worker
	charged cost                   // fair shares: what the job it holds cost its share as it was dispatched

	// The pool's, kept with the record so that the scheduler's list of
	// workers is the pool's only one.
	Name   string       // the worker's name: the pool's (Config.Name), "-", its index
	Inline atomic.Int64 // the jobs that the pool's own jobs it ran ran inline, counted by the pool (see PerWorker)
	_      [64]byte     // keeps workers off each other's cache lines
}

func newWorker[T, B any](i int, pool string) *Worker[T, B] {
	return &Worker[T, B]{index: i, wake: make(chan struct{}, 1), Name: pool + "-" + strconv.Itoa(i)}
}

// Index reports the worker's index in its pool.
func (w *Worker[T, B]) Index() int { return w.index }

// Start reports, with Config.Stamp, when the job w holds was dispatched: the
// latest reading of the pool's clock the scheduler had as it handed the
// job to its worker, which is the worker's own as its last job ended
// (Next's now) when it took the job in the same turn, and the job's At
// when an Offer handed it to an idle worker. So the job's queue wait is
// Start − Grant.At, without a reading of the clock of its own; its run time,
// measured from Start, includes the worker's turn at the lock, and a
// woken worker's wake-up.
func (w *Worker[T, B]) Start() int64 { return w.start }

// Fail tells the scheduler that the job w holds failed, as f says: its
// Next counts the failure with the job's end. The worker's goroutine calls
// it before it reports the failure anywhere, so that the count holds even
// if the error handler calls runtime.Goexit.
func (w *Worker[T, B]) Fail(f Failure) { w.failure = max(w.failure, f) }

// Waited reports whether the worker's last Next waited for its job: the
// worker was idle.
func (w *Worker[T, B]) Waited() bool { return w.waited }

// Timed reports whether the worker is to time the job Next gave it (fair
// shares charge its run time: see Next's ran).
func (w *Worker[T, B]) Timed() bool { return w.timed }

// A Grant is a job given to a worker, and whether to skip it rather than
// run it: whether the pool's context (or its batch's) was seen done as it
// was dispatched.
type Grant[T, B any] struct {
	job  T
	f    *flow[T, B]
	at   int64 // when the pool accepted the job (Config.Stamp), or 0
	skip skipCause
}

// Why a job is skipped.
type skipCause uint8

const (
	noSkip       skipCause = iota // run it
	batchStopped                  // its batch's context ended: the cause is the batch's stop
	poolStopped                   // the pool's context ended: the cause is the scheduler's stop
)

// Job returns the job.
func (g *Grant[T, B]) Job() T { return g.job }

// Owner returns whose job it is: the pool's owner (Config.Own), or its
// batch's (see OpenBatch).
func (g *Grant[T, B]) Owner() B { return g.f.owner }

// At reports when the pool accepted the job (see Config.Stamp), or 0.
func (g *Grant[T, B]) At() int64 { return g.at }

// Skipped reports whether the job is to be skipped (see Cause).
func (g *Grant[T, B]) Skipped() bool { return g.skip != noSkip }

// Cause returns why g's job is skipped: the cause of its batch's or its
// pool's end, which a dispatch saw, and which never changes once seen.
func (s *Scheduler[T, B]) Cause(g *Grant[T, B]) error {
	if g.skip == batchStopped {
		return g.f.batch.stop
	}
	return s.stop
}

// takeIdle takes the idle worker the idle set picks. s.nidle > 0; s.mu
// is held.
func (s *Scheduler[T, B]) takeIdle() *Worker[T, B] {
	s.nidle--
	return s.workers[s.idle.take(len(s.workers))]
}

// addIdle puts worker i in the idle set. s.mu is held.
func (s *Scheduler[T, B]) addIdle(i int) {
	s.nidle++
	s.idle.add(i)
}

// removeIdle takes worker i, which is idle, out of the idle set. s.mu is
// held.
func (s *Scheduler[T, B]) removeIdle(i int) {
	s.nidle--
	s.idle.remove(i)
}

// An idleSet holds the workers waiting for a job, a bit per worker, and
// picks the one that gets the next: the first idle one from where the
// pool's Strategy says to start (firstIdle), or from the one after the
// worker last picked (in turn), wrapping. The scheduler
// counts the workers in it (nidle, on the line every job reads) and guards
// it with its lock.
type idleSet struct {
	firstIdle func(next, n int) int // the pool's Strategy, or nil: in turn
	bits      []uint64
	cursor    int // the worker after the one last taken from the set
}

// init sizes the set for n workers, none idle.
func (s *idleSet) init(n int) { s.bits = make([]uint64, (n+63)/64) }

// room makes room for n workers, before the lock is taken: what grow then
// installs.
func (s *idleSet) room(n int) []uint64 { return make([]uint64, (n+63)/64) }

// grow moves the set into bits, made by room for more workers than it
// holds.
func (s *idleSet) grow(bits []uint64) {
	copy(bits, s.bits)
	s.bits = bits
}

// shrunk tells the set that the workers from n on are gone; none is idle.
func (s *idleSet) shrunk(n int) {
	if s.cursor >= n {
		s.cursor = 0
	}
}

func (s *idleSet) has(i int) bool { return s.bits[i/64]&(1<<(i%64)) != 0 }

func (s *idleSet) add(i int) { s.bits[i/64] |= 1 << (i % 64) }

func (s *idleSet) remove(i int) { s.bits[i/64] &^= 1 << (i % 64) }

// take removes and returns the idle worker that gets a job, among n
// workers, in O(n/64) at most. The set is not empty.
func (s *idleSet) take(n int) int {
	start := s.cursor
	if s.firstIdle != nil {
		start = s.firstIdle(s.cursor, n) % n
	}
	i := -1
	if b := s.bits[start/64] & (^uint64(0) << (start % 64)); b != 0 {
		i = start/64*64 + bits.TrailingZeros64(b)
	} else {
		for k := 1; k <= len(s.bits); k++ { // the last turn rereads start's word
			word := (start/64 + k) % len(s.bits)
			if b := s.bits[word]; b != 0 {
				i = word*64 + bits.TrailingZeros64(b)
				break
			}
		}
	}
	s.remove(i)
	if s.cursor = i + 1; s.cursor == n {
		s.cursor = 0
	}
	return i
}
