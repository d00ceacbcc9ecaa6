package crew

import (
	"context"

	"github.com/sourcegraph/conc/panics"
)

// The actor's goroutine: it drains the mailbox, calls the handler for
// one message at a time, and reports what the handler returned or raised.

// run is the actor's goroutine, until a runtime.Goexit ends it: then
// another run goes on in its place (see exited).
func (r *Ref[T]) run(ctx context.Context) {
	// When ctx ends, stop at once, not after the message in hand: Tell
	// refuses from then on and routers skip the actor.
	unregister := context.AfterFunc(ctx, func() { r.shutdown(context.Cause(ctx)) })
	returned := false
	defer func() {
		unregister()
		if !returned {
			r.exited(ctx)
			return
		}
		r.busy.Store(false)
		r.end()
	}()
	r.loop(ctx)
	returned = true
	r.shutdown(ErrStopped) // a no-op unless the loop ended for another reason
}

// exited reports a runtime.Goexit that is ending the actor's goroutine (a
// panic would have been recovered) as its handler's failure, as the
// handler's panic is, unless it came from the error handler that a
// failure of the handler reached (then that failure is reported already);
// and starts a goroutine that goes on with the next message, even if the
// error handler calls runtime.Goexit again. The message in hand counts as
// handled. The replacement is counted before the new goroutine starts, so
// that every count of this goroutine's happens before Done closes (the new
// goroutine closes it, once the actor stops).
func (r *Ref[T]) exited(ctx context.Context) {
	defer func() {
		r.reporting = false
		defer func() { go r.run(ctx) }() // also if the Recorder calls runtime.Goexit
		if r.rec != nil {
			r.rec.Add(EventReplaced, 1)
		}
	}()
	if r.rec != nil {
		r.rec.Add(EventCompleted, 1)
	}
	if !r.reporting {
		r.report(goexited("handler"))
	}
}

// loop handles messages until the actor stops.
func (r *Ref[T]) loop(ctx context.Context) {
	done := ctx.Done() // nil for a context that never ends
	for {
		// busy is set before Dequeue and stays set while messages keep
		// coming, so a message is never out of the mailbox while busy still
		// reads false. Once the actor stops, its mailbox is closed: Dequeue
		// finds nothing.
		for !r.shut.Load() {
			// AfterFunc stops the actor when ctx ends, but on a goroutine
			// of its own; look too, so that no message starts after ctx
			// ended. A one-case non-blocking receive is cheap; a select
			// that also waited for Stop would cost more than a message.
			if done != nil {
				select {
				case <-done:
					r.shutdown(context.Cause(ctx))
					return
				default:
				}
			}
			if !r.busy.Load() {
				r.busy.Store(true)
			}
			msg, ok := r.mb.Dequeue()
			if !ok {
				r.busy.Store(false)
				if r.draining.Load() && !r.lingers() {
					// Drained: what a Tell that raced Drain queues from
					// here on, shutdown's Close hands to the dead letters.
					// A keyed router's routee first waits for the
					// messages its draining router still holds: the
					// router wakes it once none is left.
					r.shutdown(ErrStopped)
					return
				}
				if r.lazy && r.mb.Len() > 0 {
					continue // a Tell that read busy before it was cleared did not signal (see queued)
				}
				break
			}
			r.invoke(ctx, msg)
		}
		if r.shut.Load() {
			return
		}
		<-r.signal // a message, or the actor stopped or drains
	}
}

// invoke calls the handler and reports what went wrong.
func (r *Ref[T]) invoke(ctx context.Context, msg T) {
	if err := r.call(ctx, msg); err != nil {
		r.report(err)
	}
	if r.rec != nil {
		r.rec.Add(EventCompleted, 1)
	}
}

// report hands a handler's failure to the error handler.
func (r *Ref[T]) report(err error) {
	if r.rec != nil {
		r.rec.Add(EventFailed, 1)
		if _, ok := err.(*panicError); ok {
			r.rec.Add(EventPanicked, 1)
		}
	}
	err = &actorError{name: r.name, err: err}
	if r.onError != nil {
		r.reporting = true // a runtime.Goexit in onError fails nothing more (see exited)
		r.onError(err)
		r.reporting = false
	} else {
		logError(&r.errLog, r.name, err)
	}
}

// call calls the handler, turning a panic into an error that carries the
// panic value and its stack (conc's panics.Recovered). panics.Try would
// build a closure around msg that escapes to the heap: one allocation per
// message; a deferred recover here costs none.
func (r *Ref[T]) call(ctx context.Context, msg T) (err error) {
	if r.crash {
		return r.handle(ctx, msg) // WithoutPanicRecovery: a panic crashes the process
	}
	defer func() {
		if v := recover(); v != nil {
			err = panicked("handler", panics.NewRecovered(1, v))
		}
	}()
	return r.handle(ctx, msg)
}
