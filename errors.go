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
// errors.As.

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
