package crew

import (
	"fmt"
	"log/slog"
	"math/bits"
	"sync/atomic"
)

// An Option configures an actor (Spawn), a router that spawns its routees
// (SpawnRouter) or, later, a pool. An option that does not apply to what it
// is passed to, such as WithStrategy to Spawn, is ignored.
type Option func(*options)

type options struct {
	name        string
	newMailbox  any // func() Mailbox[T] for the actor's T, checked by Spawn
	deadLetters func(DeadLetter)
	onError     func(error)
	strategy    Strategy
}

func collect(opts []Option) options {
	var o options
	for _, opt := range opts {
		if opt == nil {
			panic("crew: nil Option")
		}
		opt(&o)
	}
	return o
}

// WithName names the actor, for dead letters, errors and logs. A router or
// pool that spawns its routees names them name-0, name-1, and so on.
func WithName(name string) Option {
	return func(o *options) { o.name = name }
}

// WithMailbox makes each actor take its mailbox from newMailbox, which is
// called once per actor. The default is NewUnbounded. T must be the actor's
// message type: Spawn panics otherwise. Give each actor its own mailbox: a
// mailbox shared between actors makes Len and dead letters meaningless.
func WithMailbox[T any](newMailbox func() Mailbox[T]) Option {
	if newMailbox == nil {
		panic("crew: WithMailbox: nil mailbox factory")
	}
	return func(o *options) { o.newMailbox = newMailbox }
}

// WithDeadLetters sends each message that will never reach its handler to
// sink, with the reason: rejected by a full mailbox, evicted by a DropOldest
// one, told to a stopped actor, or left queued when the actor stopped. sink
// runs on the goroutine that gave up on the message (a sender or the actor),
// possibly on several at once; it must not block for long or panic. Dead
// letters are always counted (Ref.DeadLetters); without this option they are
// also logged through log/slog, sparingly: the 1st, 2nd, 4th, 8th... of the
// process.
func WithDeadLetters(sink func(DeadLetter)) Option {
	if sink == nil {
		panic("crew: WithDeadLetters: nil sink")
	}
	return func(o *options) { o.deadLetters = sink }
}

// WithErrorHandler sends each error a handler returns, and each panic it
// raises (as an error that errors.As unwraps to *panics.ErrRecovered, with
// the stack), to onError, on the actor's goroutine. The actor then goes on
// with its next message. onError must not panic. Without this option, errors
// are logged through log/slog, sparingly.
func WithErrorHandler(onError func(error)) Option {
	if onError == nil {
		panic("crew: WithErrorHandler: nil handler")
	}
	return func(o *options) { o.onError = onError }
}

// A DeadLetter is a message that will never reach its handler.
type DeadLetter struct {
	Message any    // the message
	Target  string // the name of the actor it was for
	Reason  error  // why: ErrMailboxFull (or an error wrapping it), ErrStopped, the actor context's cause, ...
}

// String describes the dead letter for logs.
func (d DeadLetter) String() string {
	return fmt.Sprintf("dead letter to %q: %v (message %v)", d.Target, d.Reason, d.Message)
}

// sparse decides which of a series of events to log: the 1st, 2nd, 4th, 8th
// and so on, so a storm of them costs a few log lines, not one per event.
type sparse struct{ n atomic.Uint64 }

// next counts an event and reports whether to log it, and its number.
func (s *sparse) next() (uint64, bool) {
	n := s.n.Add(1)
	return n, bits.OnesCount64(n) == 1
}

var (
	deadLetterLog sparse
	errorLog      sparse
)

// logDeadLetter is the sink used without WithDeadLetters.
func logDeadLetter(d DeadLetter) {
	if n, ok := deadLetterLog.next(); ok {
		slog.Warn("crew: dead letter", "target", d.Target, "reason", d.Reason, "count", n)
	}
}

// logError is the error handler used without WithErrorHandler.
func logError(err error) {
	if n, ok := errorLog.next(); ok {
		slog.Error("crew: handler failed", "err", err, "count", n)
	}
}
