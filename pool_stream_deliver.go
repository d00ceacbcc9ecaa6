package crew

import "context"

// A Stream's jobs: each runs its task, then, in the deliverer's role, the
// callbacks it is the last to let run (see Stream's fields).

// run is the job of slot: it runs its task, then the callbacks it is the
// last to let run, and returns the task's error or the first callback's.
func (s *Stream) run(ctx context.Context, slot *streamSlot) (err error) {
	task, seq := slot.task, slot.seq
	returned := false
	defer catch(&returned, !s.host.noRecovery, "job", func(e error, panicked bool) {
		if panicked {
			err = e
		}
		s.ended(slot, seq, nil, e)
	})
	cb, err := task(ctx)
	returned = true
	return s.ended(slot, seq, cb, err)
}

// ended records the end of task seq, in slot, with its callback or
// error, then, if every task before it has ended and had its callback
// run, runs its callback and those of the tasks after it that ended, in
// order, unless another job is running them. It returns err, or the error
// of the callback that failed.
func (s *Stream) ended(slot *streamSlot, seq int64, cb func() error, err error) error {
	if err != nil {
		return err // its slot never ends: no callback runs from seq on
	}
	slot.cb = cb
	slot.ended.Store(true)
	// The job looks at the head once its slot is marked, and a deliverer
	// looks at the head's slot once it stored the head: if the job finds
	// its task is not the head's, the deliverer that makes it so finds
	// the slot marked.
	for ready := s.head.Load() == seq; ready; {
		if s.hooks != nil {
			s.hooks.claiming()
		}
		if !s.delivering.CompareAndSwap(false, true) {
			break // the holder of the role runs it, or finds it marked once it gives the role up
		}
		stop, err := s.deliver()
		s.delivering.Store(false)
		if err != nil {
			return err
		}
		// The job whose slot stopped the run may have found the role
		// held since: look again, without the role.
		ready = stop != nil && !s.halted.Load() && stop.ended.Load()
	}
	return nil
}

// deliver runs, in the deliverer's role, the callbacks of the tasks that
// ended in order from the head, and returns the slot where it stopped, the
// head's, or the error of the callback that failed, which halts the
// stream. Then it wakes a Submit that waits for the room they made, once
// per run of callbacks rather than per callback; a halted stream wakes
// none: the failure's cancellation does, and Submit refuses the task.
func (s *Stream) deliver() (stop *streamSlot, err error) {
	if s.halted.Load() {
		// A callback failed after this job found its own ready (it
		// looks before it takes the role, and a failing deliverer halts
		// the stream before it gives the role up): none runs after it.
		return nil, nil
	}
	head := s.head.Load()
	for {
		slot := s.win.at(s.front)
		if !slot.ended.Load() {
			stop = slot
			break
		}
		cb := slot.cb
		slot.task, slot.cb = nil, nil
		slot.ended.Store(false)
		if cb != nil {
			err = s.callback(cb)
		}
		s.win.pass(&s.front)
		head++
		s.head.Store(head) // after the slot is emptied: Submit fills it again once it loads this
		if err != nil {
			if s.hooks != nil {
				s.hooks.halting()
			}
			s.halted.Store(true) // before the role is given up: the next holder finds it
			return nil, err
		}
	}
	if s.waiting.Load() && head >= s.want.Load() && s.waiting.Swap(false) {
		select {
		case s.room <- struct{}{}:
		default: // a signal is pending already
		}
	}
	return stop, nil
}

// callback runs cb, and returns its error, or its panic as an error. If
// cb calls runtime.Goexit (or panics WithoutPanicRecovery), the job that
// ran it ends there: no callback runs after it.
func (s *Stream) callback(cb func() error) (err error) {
	returned := false
	defer catch(&returned, !s.host.noRecovery, "callback", func(e error, panicked bool) {
		if panicked {
			err = e
			return
		}
		s.halted.Store(true)
		s.delivering.Store(false)
	})
	err = cb()
	returned = true
	return err
}
