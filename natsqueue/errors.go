package natsqueue

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrIncompatible is returned by Open when a stream or consumer of the
	// queue's name exists with a configuration the queue cannot use; Open
	// leaves it as it was.
	ErrIncompatible = errors.New("natsqueue: incompatible stream or consumer")
	// ErrUndecodable is the reason of the dead letter of a message the
	// codec cannot decode; it wraps the codec's error.
	ErrUndecodable = errors.New("natsqueue: undecodable message")
	// ErrTooManyDeliveries is the reason of the dead letter of a job that
	// failed on its last allowed delivery, or was delivered more times than
	// allowed; it wraps the last error when there is one.
	ErrTooManyDeliveries = errors.New("natsqueue: too many deliveries")
	// ErrDuplicate is returned by TellWith when the job's UniqueKey was
	// told already within the stream's duplicate window: the job is not
	// stored again.
	ErrDuplicate = errors.New("natsqueue: duplicate job")
	// ErrNoDeadLetter is returned by the DeadLetters methods that take a
	// sequence number that no dead letter has (never, or no longer: it
	// was replayed or purged).
	ErrNoDeadLetter = errors.New("natsqueue: no such dead letter")
)

// Permanent marks err as a failure that retrying cannot fix: Serve ends the
// job as a dead letter, with the returned error as its reason, instead of
// retrying it. The result wraps err (errors.Is and errors.As see it);
// Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return "permanent: " + e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// isPermanent reports whether err is, or wraps, an error made by Permanent.
func isPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// An openError is an error of Open's (or of fn's) about the queue called
// name. Its text is "natsqueue: <fn> <name>: " and err's without the "natsqueue: " that
// begins a sentinel's such as ErrIncompatible, so that the prefix comes
// once; errors.Is and errors.As see err.
type openError struct {
	fn, name string
	err      error
}

func (e *openError) Error() string {
	return fmt.Sprintf("natsqueue: %s %q: %s", e.fn, e.name, strings.TrimPrefix(e.err.Error(), "natsqueue: "))
}

func (e *openError) Unwrap() error { return e.err }

// about returns err with context before its text, "natsqueue: <context>:
// " and err's text without the "natsqueue: " that begins a sentinel's, so
// that the prefix comes once; errors.Is and errors.As see err.
func about(context string, err error) error { return &aboutError{context, err} }

type aboutError struct {
	context string
	err     error
}

func (e *aboutError) Error() string {
	return "natsqueue: " + e.context + ": " + strings.TrimPrefix(e.err.Error(), "natsqueue: ")
}

func (e *aboutError) Unwrap() error { return e.err }
