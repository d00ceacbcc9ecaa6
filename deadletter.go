package crew

import (
	"fmt"
	"log/slog"
	"math/bits"
	"sync/atomic"
)

// Dead letters: what happens to a message or a job that will never reach
// its handler, and the sparse logs of the default sinks.

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

// A sparse counts one source's events of one kind (an actor's dead
// letters, say) and decides which of them the default sink or error
// handler logs: the 1st, 2nd, 4th, 8th and so on, so that a storm costs a
// few log lines, not one per event. Each source keeps its own, so that
// its first event is logged, as number 1, whatever the others did.
type sparse struct{ n atomic.Uint64 }

// next counts an event and reports whether to log it, and its number.
func (s *sparse) next() (uint64, bool) {
	n := s.n.Add(1)
	return n, bits.OnesCount64(n) == 1
}

// sendDeadLetter sends d to sink (WithDeadLetters), or, if sink is nil,
// logs it sparingly as one of the dead letters of the source that s
// counts.
func sendDeadLetter(sink func(DeadLetter), s *sparse, d DeadLetter) {
	if sink != nil {
		sink(d)
		return
	}
	if n, ok := s.next(); ok {
		slog.Warn("crew: dead letter", "target", d.Target, "reason", d.Reason, "count", n)
	}
}

// logError is the error handler used without WithErrorHandler: err is one
// of the errors of actor, which s counts.
func logError(s *sparse, actor string, err error) {
	if n, ok := s.next(); ok {
		slog.Error("crew: handler failed", "actor", actor, "err", err, "count", n)
	}
}
