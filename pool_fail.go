package crew

import (
	"github.com/crewlib/crew/internal/sched"
)

// Failing: a job's error, kept for Wait and, with WithCancelOnError,
// cancelling the pool's context (see stop); and the dead letters of jobs
// that will never run.

// fail records the error of a job of batch b, or of the pool if b is nil,
// then reports it to the Recorder and the error handler: so a failure is
// kept for Wait even if one of those calls runtime.Goexit.
func (p *Pool[T]) fail(err error, b *Batch[T]) {
	p.failed.Add(1)
	panicked := isPanic(err)
	if panicked {
		p.panicked.Add(1)
	}
	if b != nil {
		b.record(err)
	} else {
		p.record(err)
	}
	p.meterFailure(panicked)
	if p.onError != nil {
		p.onError(err)
	}
}

// record keeps err, a job's of the pool, for Wait and, if it is the first
// and the pool cancels on error, cancels the pool's context with it, once
// dispatching stopped.
func (p *Pool[T]) record(err error) {
	if p.errs.add(err, p.ctx) && p.cancelOnError {
		p.stop(err)
	}
}

// deadLetters delivers the dead letters of jobs that will never run, left
// with target, then counts them out.
func (p *Pool[T]) deadLetters(lost []sched.Grant[T, *Batch[T]], target string, reason error) {
	if len(lost) == 0 {
		return
	}
	defer func() { // also if a sink calls runtime.Goexit: its jobs are gone either way
		var now int64
		if p.rec != nil {
			p.rec.Add(EventDropped, len(lost))
			now = p.clock()
		}
		p.s.Lost(lost, now)
	}()
	for i := range lost {
		sink := p.sink
		if b := lost[i].Batch(); b != nil {
			sink = b.sink
		}
		sendDeadLetter(sink, &p.deadLog, DeadLetter{Message: lost[i].Job(), Target: target, Reason: reason})
	}
}

// evictions delivers the dead letters of the jobs the backlog mailbox
// evicted (see sched.Config.OnEvict).
func (p *Pool[T]) evictions() {
	p.deadLetters(p.s.Evicted(), p.name, ErrEvicted)
}
