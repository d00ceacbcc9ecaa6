package crew

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/sourcegraph/conc/panics"
)

// The errors crew makes of what went wrong, each one line that a person
// can read in a log, with what a program matches behind errors.Is and
// errors.As: the sentinels below, and the errors of panics, Goexits and
// actors after them.

// ErrMailboxFull is returned by Enqueue when a bounded mailbox has no room and
// its overflow policy does not wait for room. The message was not stored.
var ErrMailboxFull = errors.New("crew: mailbox full")

// ErrMailboxClosed is returned by Enqueue after Close, and by an Enqueue that
// was blocked waiting for room when Close was called. The message was not
// stored.
var ErrMailboxClosed = errors.New("crew: mailbox closed")

// ErrDropped is returned by Enqueue when a full DropNewest mailbox discards
// the incoming message. It wraps ErrMailboxFull, so
// errors.Is(err, ErrMailboxFull) holds as well.
var ErrDropped = fmt.Errorf("%w: newest message dropped", ErrMailboxFull)

// ErrEvicted is the reason a DropOldest mailbox gives its drop hook for the
// oldest message it evicted to make room. It wraps ErrMailboxFull.
var ErrEvicted = fmt.Errorf("%w: oldest message evicted", ErrMailboxFull)

// ErrPoolClosed is returned by Submit and TrySubmit (as false) once Wait has
// been called, for a job that does not come from one of the pool's own jobs.
var ErrPoolClosed = errors.New("crew: pool closed")

// ErrBatchClosed is returned by a Batch's Submit (and TrySubmit, as false)
// once the batch's Wait has begun, for a job that does not come from one of
// the batch's own jobs.
var ErrBatchClosed = errors.New("crew: batch closed")

// ErrStopped is returned by Tell when the actor has stopped, and is the
// reason of the dead letters it leaves queued when it stops.
var ErrStopped = errors.New("crew: actor stopped")

// ErrNoRoutee is returned by a Router's Tell and Broadcast when it has no
// live routee to send to, its routees having stopped on their own (after
// the router's own Stop or Drain, they return ErrStopped); the caller still
// has the message.
var ErrNoRoutee = errors.New("crew: router has no live routee")

// A panicError is a recovered panic: "crew: job panicked: <value>". The
// stack is behind errors.As, in the *panics.ErrRecovered it unwraps to
// (which unwraps in turn to the panic value, if that is an error).
type panicError struct {
	what string // what panicked: a job, a handler
	rec  *panics.ErrRecovered
}

// panicked makes the error of a panic recovered in what.
func panicked(what string, r panics.Recovered) error {
	return &panicError{what: what, rec: &panics.ErrRecovered{Recovered: r}}
}

func (e *panicError) Error() string { return fmt.Sprintf("crew: %s panicked: %v", e.what, e.rec.Value) }
func (e *panicError) Unwrap() error { return e.rec }

// isPanic reports whether err is, or wraps, a recovered panic.
func isPanic(err error) bool {
	var pe *panicError
	return errors.As(err, &pe)
}

// ErrGoexit is what errors.Is finds in the error of a job, a callback or a
// handler that called runtime.Goexit, as t.FailNow and t.SkipNow do
// inside a job of a test. crew counts such a call as a failure, as a
// panic, and a new goroutine takes the place of the one it ended: a job
// never shrinks its pool, nor a handler stops its actor (see
// PoolStats.Replaced and EventReplaced).
var ErrGoexit = errors.New("crew: runtime.Goexit called")

// A goexitError is the failure of what called runtime.Goexit: "crew: job
// called runtime.Goexit", matched by ErrGoexit.
type goexitError struct{ what string } // a job, a callback, a handler

// goexited makes the error of a runtime.Goexit in what.
func goexited(what string) error { return &goexitError{what: what} }

func (e *goexitError) Error() string        { return "crew: " + e.what + " called runtime.Goexit" }
func (e *goexitError) Is(target error) bool { return target == ErrGoexit }

// catch tells how a call that runs a job or a callback (what) ended, if
// it did not return: the call defers it, directly (recover works only
// there), and sets *returned as its last step. catch calls ended with the
// call's panic, recovered as an error that carries its value and stack
// (panicked is true), unless recovery is off; else with a
// runtime.Goexit's error: a Goexit, which goes on once ended returns, or,
// with recovery off, a panic, which goes on to crash the process. A call
// that returned handles its own result. The worker's loop (worker.jobs)
// and an actor's goroutine do without it: the one recovers a job's panic
// only, raising any other again, the other no panic at all.
func catch(returned *bool, recovery bool, what string, ended func(err error, panicked bool)) {
	if *returned {
		return
	}
	if recovery {
		if v := recover(); v != nil {
			ended(panicked(what, panics.NewRecovered(1, v)), true)
			return
		}
	}
	ended(goexited(what), false)
}

// An actorError is an error of an actor's handler, with the actor's name:
// "crew: actor "name": <error>", without a second "crew:".
type actorError struct {
	name string
	err  error
}

func (e *actorError) Error() string {
	return "crew: actor " + strconv.Quote(e.name) + ": " + strings.TrimPrefix(e.err.Error(), "crew: ")
}
func (e *actorError) Unwrap() error { return e.err }
