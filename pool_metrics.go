package crew

import (
	"time"

	"github.com/crewlib/crew/internal/sched"
)

// What a pool reports to its Recorder (WithMetrics). Every call is made
// outside the scheduler's lock, on the goroutine the event happened on:
// the Submit's, or the worker's.

// clock reads the pool's clock: the time since the pool was made, in
// nanoseconds, plus 1, so that 0 means "not read". Since reads the
// monotonic clock alone.
func (p *Pool[T]) clock() int64 { return int64(time.Since(p.epoch)) + 1 }

// gauges reads the pool's gauges, for its Recorder's Source.
func (p *Pool[T]) gauges() Gauges {
	c := p.s.Counts()
	g := Gauges{Queued: c.Queued, Running: c.Running, Workers: c.Live, Blocked: c.Blocked}
	if p.reported.Load()&closing != 0 { // Wait stopped every worker
		g.Workers = 0
	}
	return g
}

// counted counts a job accepted, if err is nil, and returns err.
func (p *Pool[T]) counted(err error) error {
	if err == nil && p.rec != nil {
		p.rec.Add(EventSubmitted, 1)
		if v := p.reported.Add(1); v&closing != 0 && v&^closing == p.accepted.Load() {
			p.closeRecorder() // the last Submit to count its job, after Wait was done
		}
	}
	return err
}

// measureInline reports the end of a job of o's that a job's own Submit
// ran inline from start, a reading of the clock. It runs deferred, so
// also when the job called runtime.Goexit.
func (o *owner[T]) measureInline(start int64) {
	p := o.pool
	p.rec.Observe(RunTime, time.Duration(p.clock()-start), o.tenant)
	p.rec.Add(EventCompleted, 1)
}

// clockIn notes when g's job starts, if the worker times it (see
// sched.Worker.Timed) or the pool reports it (WithMetrics), and reports
// its queue wait, from its acceptance to its dispatch. A pool that stamps
// its jobs (WithMetrics, no backlog mailbox) reads no clock here: the
// job started when it was dispatched (sched.Worker.Start), which the
// scheduler knows from the readings it has, the Submit's and the one the
// worker made as its last job ended. So a job costs two readings, the
// Submit's and its end's, and its run time includes the worker's turn at
// the scheduler, and the Recorder's calls for the job before it, or an
// idle worker's wake-up; a pool that does not stamp reads the clock as
// the job starts.
func (w *worker[T]) clockIn(g *sched.Grant[T, *owner[T]]) {
	p := w.pool
	w.unmeasured, w.dropped = true, false
	if p.adapt != nil {
		p.adapt.began()
	}
	if !p.stamp {
		w.began = p.clock()
		return
	}
	w.began = w.rec.Start()
	p.rec.Observe(QueueWait, time.Duration(max(w.began-g.At(), 0)), "")
}

// ended reports the run time of g's job (w.ran, which measured takes from
// its reading of the clock as the job ended, w.now, and keeps for its
// share and for the scheduler, which dates the next job's start with it,
// and lets blocked Submits in at it, as it counts the job out), and its
// end. It runs also once the job called runtime.Goexit.
func (w *worker[T]) ended(g *sched.Grant[T, *owner[T]]) {
	p := w.pool
	p.rec.Observe(RunTime, time.Duration(w.ran), g.Owner().tenant)
	p.rec.Add(EventCompleted, 1)
}

// A Submit of a pool WithMetrics counts its job once the scheduler's lock
// is released, so a Submit let in just before Wait closed the pool may
// count it after Wait has seen every job end. The Recorder's Close waits
// for it, at the price of one atomic add per Submit: reported counts the
// jobs accepted whose Submit counted them (see counted), which Wait, done
// with every job, compares with the jobs the scheduler accepted in all
// (accepted); then it adds closing. Whichever of Wait and the last Submit
// to count its job finds the two equal, with closing set, calls Close:
// the later of the two, and only it.
const closing = 1 << 40

// closeMetrics is called once Wait is done with the jobs and has stopped
// the workers, in a pool WithMetrics: every job accepted has ended, and
// no other will be.
func (p *Pool[T]) closeMetrics() {
	c := p.s.Counts()
	p.accepted.Store(c.Completed + c.Canceled + c.Dropped)
	if p.reported.Add(closing)&^closing == p.accepted.Load() {
		p.closeRecorder()
	}
}

// closeRecorder closes the Recorder, once.
func (p *Pool[T]) closeRecorder() {
	if p.recClose.CompareAndSwap(false, true) {
		p.rec.Close()
	}
}
