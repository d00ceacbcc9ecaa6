package crew

import (
	"context"

	"github.com/sourcegraph/conc/panics"
)

// A Stream's jobs: each runs its task, then, in the deliverer's role, the
// callbacks it is the last to let run (see Stream's fields).

// run is the job of slot: it runs its task, then the callbacks it is the
// last to let run, and returns the task's error or the first callback's.
func (s *Stream) run(ctx context.Context, slot *streamSlot) (err error) {
	task, seq := slot.task, slot.seq
	returned := false
	defer func() {
		if returned {
			return
		}
		if !s.noPanic {
			if v := recover(); v != nil {
				err = panicked("job", panics.NewRecovered(1, v))
				s.ended(seq, nil, err)
				return
			}
		}
		s.ended(seq, nil, errGoexit) // runtime.Goexit, or a panic on its way to crash the process
	}()
	cb, err := task(ctx)
	returned = true
	return s.ended(seq, cb, err)
}

// ended records the end of task seq, with its callback or error, then, if
// every task before it has ended and had its callback run, runs its
// callback and those of the tasks after it that ended, in order, unless
// another job is running them. It returns err, or the error of the
// callback that failed.
func (s *Stream) ended(seq int64, cb func() error, err error) error {
	if err != nil {
		return err // its slot never ends: no callback runs from seq on
	}
	slot := &s.slots[seq%int64(len(s.slots))]
	slot.cb = cb
	slot.ended.Store(true)
	for s.ready() {
		if s.hooks != nil {
			s.hooks.claiming()
		}
		if !s.delivering.CompareAndSwap(false, true) {
			break // the holder of the role runs it, or looks again once it gives the role up
		}
		err = s.deliver()
		s.delivering.Store(false)
		if err != nil {
			return err
		}
	}
	return nil
}

// ready reports whether the next callback may run: the stream has not
// halted and that callback's task has ended.
func (s *Stream) ready() bool {
	return !s.halted.Load() && s.slots[s.head.Load()%int64(len(s.slots))].ended.Load()
}

// deliver runs, in the deliverer's role, the callbacks of the tasks that
// ended in order from the head, and returns the error of the one that
// failed, which halts the stream. Then it wakes a Submit that waits for
// the room they made, once per run of callbacks rather than per callback;
// a halted stream wakes none: the failure's cancellation does, and Submit
// refuses the task.
func (s *Stream) deliver() (err error) {
	if s.halted.Load() {
		// A callback failed after this job found the next one ready
		// (ready reads halted before it takes the role, and a failing
		// deliverer halts the stream before it gives the role up): none
		// runs after it.
		return nil
	}
	head := s.head.Load()
	for {
		slot := &s.slots[head%int64(len(s.slots))]
		if !slot.ended.Load() {
			break
		}
		cb := slot.cb
		slot.task, slot.cb = nil, nil
		slot.ended.Store(false)
		if cb != nil {
			err = s.callback(cb)
		}
		head++
		s.head.Store(head) // after the slot is emptied: Submit fills it again once it loads this
		if err != nil {
			if s.hooks != nil {
				s.hooks.halting()
			}
			s.halted.Store(true) // before the role is given up: the next holder finds it
			return err
		}
	}
	if s.waiting.Load() && head >= s.want.Load() && s.waiting.Swap(false) {
		select {
		case s.room <- struct{}{}:
		default: // a signal is pending already
		}
	}
	return nil
}

// callback runs cb, and returns its error, or its panic as an error. If
// cb calls runtime.Goexit (or panics WithoutPanicRecovery), the job that
// ran it ends there: no callback runs after it.
func (s *Stream) callback(cb func() error) (err error) {
	returned := false
	defer func() {
		if returned {
			return
		}
		if !s.noPanic {
			if v := recover(); v != nil {
				err = panicked("callback", panics.NewRecovered(1, v))
				return
			}
		}
		s.halted.Store(true)
		s.delivering.Store(false)
	}()
	err = cb()
	returned = true
	return err
}
