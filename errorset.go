package crew

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// An errorSet keeps the errors of an owner's jobs for its Wait: the first,
// and with WithAllErrors every one but those that only echo the end of the
// context the jobs received, as the jobs still running when the first
// error canceled it tend to return. It is made with the first error, so
// that an owner whose jobs all succeed (a batch per request, say) carries a
// pointer, not a lock and a list.
type errorSet struct {
	set atomic.Pointer[errorList]
}

// An errorList is what an errorSet holds once an error was added.
type errorList struct {
	mu   sync.Mutex // guards the fields below
	err  error      // the first error
	errs []error    // every error, with all
}

// add keeps err, with every other error if all, and reports whether it is
// the first; ctx is the jobs'.
func (e *errorSet) add(err error, ctx context.Context, all bool) (first bool) {
	l := e.set.Load()
	if l == nil {
		l = new(errorList)
		if !e.set.CompareAndSwap(nil, l) {
			l = e.set.Load()
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	first = l.err == nil
	if first {
		l.err = err
	}
	if all && (first || !echoes(err, ctx)) {
		l.errs = append(l.errs, err)
	}
	return first
}

// result returns every error joined, with all, else the first, or nil.
// An add that happened before the call is seen.
func (e *errorSet) result(all bool) error {
	l := e.set.Load()
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if all && len(l.errs) > 0 {
		return errors.Join(l.errs...)
	}
	return l.err
}

// echoes reports whether err only echoes the end of ctx: ctx is done, and
// err is, or wraps, context.Canceled or context.DeadlineExceeded. The one
// test of it, for an owner's errors, Map's and the ordered streams'.
func echoes(err error, ctx context.Context) bool {
	return ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}
