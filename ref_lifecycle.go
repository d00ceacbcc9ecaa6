package crew

// An actor's end: Stop and the end of its context stop it at once, Drain
// once its mailbox is empty; shutdown closes the mailbox and delivers the
// dead letters, and Done closes once that and the goroutine's exit are
// both over.

// shutdown stops the actor for reason, once: it refuses new messages,
// closes the mailbox (waking senders blocked on it, the handler's own
// included) and sends what was queued to the dead letters. The message being
// handled, if any, finishes.
func (r *Ref[T]) shutdown(reason error) {
	if !r.shut.CompareAndSwap(false, true) {
		return
	}
	defer r.end() // also if a dead-letter sink calls runtime.Goexit: Done closes all the same
	r.stopped.Store(true)
	r.wake()
	if s, ok := r.mb.(sealer[T]); ok {
		s.seal(func(msg T) { r.deadLetter(msg, reason) })
	} else {
		for _, msg := range r.mb.Close() {
			r.deadLetter(msg, reason)
		}
	}
}

// lingers reports whether the actor, draining, its mailbox found empty,
// waits rather than ends: a keyed router's routee does while its draining
// router still holds messages for it (see lingerer).
func (r *Ref[T]) lingers() bool {
	l, ok := r.mb.(lingerer)
	return ok && l.linger()
}

// A lingerer is a mailbox whose actor, drained, may have more to take
// from elsewhere: a keyed router's routee's (routeeBox), whose router
// holds messages behind their keys. linger reports whether the actor
// waits for them rather than ends; once it reports false, nothing more
// comes.
type lingerer interface {
	linger() bool
}

var _ lingerer = (*routeeBox[int])(nil)

// A sealer is a mailbox that keeps with each message what its end must
// release (a keyed router's routee's, routeeBox): in place of Close,
// shutdown has it close, hand each message still queued to dead, and
// release that message's hold only then.
type sealer[T any] interface {
	seal(dead func(T))
}

// end is called once when shutdown has delivered the dead letters and once
// when the goroutine exits, which may happen in either order (Stop and the
// context's AfterFunc run shutdown on other goroutines); the second closes
// done, so that Done means both.
func (r *Ref[T]) end() {
	if r.ended.Add(1) == 2 {
		if r.ownRec {
			r.rec.Close() // before Done: its watchers may read the metrics
		}
		close(r.done)
		r.watchMu.Lock()
		r.finished = true
		watchers := r.watchers
		r.watchers = nil
		r.watchMu.Unlock()
		for _, f := range watchers {
			f()
		}
	}
}

// whenDone calls f once Done is closed: at once, if it is.
func (r *Ref[T]) whenDone(f func()) {
	r.watchMu.Lock()
	if !r.finished {
		r.watchers = append(r.watchers, f)
		r.watchMu.Unlock()
		return
	}
	r.watchMu.Unlock()
	f()
}

// Stop stops the actor: from now on Tell returns ErrStopped, the messages
// still queued become dead letters with reason ErrStopped (the sink runs on
// the caller's goroutine), senders blocked on a full mailbox wake with
// ErrStopped, and the actor exits once it has finished the message it is
// handling, if any. Stop does not wait for that: receive from Done. It is
// safe to call more than once, and from the actor's own handler (which must
// not then wait on Done).
func (r *Ref[T]) Stop() {
	if r == nil || r.done == nil {
		r.unmade("Stop")
	}
	r.shutdown(ErrStopped)
}

// Drain stops the actor once it has handled what is queued: from now on
// Tell returns ErrStopped (and records the message as a dead letter), the
// messages already in the mailbox are handled, and then the actor exits,
// as after Stop; a message that a Tell racing Drain queued after the
// mailbox emptied becomes a dead letter then. It is Akka's PoisonPill. A
// keyed router's routee drained by its router's Drain waits, its mailbox
// empty, until the router holds no more messages for it, then exits.
// Drain does not wait: receive from Done. Stop, or the end of the actor's
// context, during a Drain stops it at once. Drain is safe to call more
// than once, and from the actor's own handler.
func (r *Ref[T]) Drain() {
	if r == nil || r.done == nil {
		r.unmade("Drain")
	}
	r.draining.Store(true) // before stopped: a loop that sees the mailbox empty then ends it
	r.stopped.Store(true)
	r.wake()
}

// wake pokes the actor's signal without blocking; a pending poke suffices.
func (r *Ref[T]) wake() {
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

// Done returns a channel that is closed once the actor's goroutine has
// exited and its leftover messages went to the dead letters: the delivery
// of every dead letter of a Stop happens before Done is closed, and the
// actor's last handler call returns before it too.
func (r *Ref[T]) Done() <-chan struct{} {
	if r == nil || r.done == nil {
		r.unmade("Done")
	}
	return r.done
}

// Stopped reports whether the actor has stopped, or is stopping or
// draining (Stop, Drain, the end of its context), so that its Tell takes
// no more messages. A draining keyed router's routee still takes those
// its router holds behind their keys (see Router.Drain).
func (r *Ref[T]) Stopped() bool {
	if r == nil || r.done == nil {
		r.unmade("Stopped")
	}
	return r.stopped.Load()
}

// gauges reads the actor's gauges, for its Recorder's Source.
func (r *Ref[T]) gauges() Gauges {
	var g Gauges
	if r.busy.Load() {
		g.Running = 1
	}
	if r.ended.Load() < 2 {
		g.Workers = 1
	}
	g.Queued = max(r.Len(), 0)
	return g
}
