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

// evicted delivers the dead letters of the jobs the backlog mailbox
// evicted, and counts them for the Recorder, also if a sink calls
// runtime.Goexit; the scheduler counts them out once it returns (see
// sched.Config.OnLost).
func (p *Pool[T]) evicted(lost []sched.Grant[T, *owner[T]]) (now int64) {
	if p.rec != nil {
		defer p.rec.Add(EventDropped, len(lost))
	}
	for i := range lost {
		sendDeadLetter(lost[i].Owner().sink, &p.deadLog, DeadLetter{Message: lost[i].Job(), Target: p.name, Reason: ErrEvicted})
	}
	if p.rec != nil {
		now = p.clock()
	}
	return now
}
