package crew

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// An errorSet keeps the errors of a pool's or a batch's jobs for its Wait:
// the first, and with WithAllErrors every one but those that only echo the
// end of the context the jobs received, as the jobs still running when the
// first error canceled it tend to return.
type errorSet struct {
	all bool // WithAllErrors

	some atomic.Bool // an error was added: result takes the lock only then

	mu   sync.Mutex // guards the fields below
	err  error      // the first error
	errs *[]error   // every error, with all: made as the first is added: an owner whose jobs all succeed never pays for it
}

// add keeps err, and reports whether it is the first; ctx is the jobs'.
func (e *errorSet) add(err error, ctx context.Context) (first bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	first = e.err == nil
	if first {
		e.err = err
		e.some.Store(true)
	}
	if e.all && (first || !echoes(err, ctx)) {
		if e.errs == nil {
			e.errs = new([]error)
		}
		*e.errs = append(*e.errs, err)
	}
	return first
}

// result returns every error joined, with all, else the first, or nil.
// An add that happened before the call is seen.
func (e *errorSet) result() error {
	if !e.some.Load() {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.all && e.errs != nil {
		return errors.Join(*e.errs...)
	}
	return e.err
}

// echoes reports whether err only echoes the end of ctx.
func echoes(err error, ctx context.Context) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}
