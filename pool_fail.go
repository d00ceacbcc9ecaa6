package crew

import (
	"github.com/crewlib/crew/internal/sched"
)

// Failing: a job's error reported (its owner keeps it for Wait: see
// owner.fail); and the dead letters of jobs that will never run.

// report reports a job's failure, f, already recorded and counted (see
// owner.fail, worker.fail), to the Recorder and the error handler.
func (p *Pool[T]) report(err error, f sched.Failure) {
	if p.rec != nil {
		p.rec.Add(EventFailed, 1)
		if f == sched.Panicked {
			p.rec.Add(EventPanicked, 1)
		}
	}
	if p.onError != nil {
		p.onError(err)
	}
}

// deadLetters delivers the dead letters of jobs that will never run, left
// with target, then counts them out.
func (p *Pool[T]) deadLetters(lost []sched.Grant[T, *owner[T]], target string, reason error) {
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
		sendDeadLetter(lost[i].Owner().sink, &p.deadLog, DeadLetter{Message: lost[i].Job(), Target: target, Reason: reason})
	}
}

// evictions delivers the dead letters of the jobs the backlog mailbox
// evicted (see sched.Config.OnEvict).
func (p *Pool[T]) evictions() {
	p.deadLetters(p.s.Evicted(), p.name, ErrEvicted)
}
