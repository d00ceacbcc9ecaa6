package natsqueue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// leaderWait bounds Open's wait for leaders when its ctx has no deadline.
// A variable so that tests can shorten it.
var leaderWait = 30 * time.Second

// Open's requests wait firstAttempt for an answer, then twice as long at
// each attempt, up to lastAttempt (nats.go's own default).
const (
	firstAttempt = 500 * time.Millisecond
	lastAttempt  = 5 * time.Second
)

// The server's error codes that mean a request has no leader to answer it
// for now: the cluster has none (its meta leader), or the stream or the
// consumer has none because no server of its group is up.
const (
	errCodeClusterNotAvailable = 10008
	errCodeStreamOffline       = 10118
	errCodeConsumerOffline     = 10119
)

// untilLed calls open, which makes JetStream API requests, until it
// returns nil or an error that leaderless does not report. It gives open
// a context that bounds one attempt, so that a request no leader answers
// is sent again rather than waited on. It retries while ctx allows, or for
// leaderWait if ctx has no deadline, and then returns an error that says
// no leader was elected, wrapping the deadline's error.
//
// A cluster that has just started, or has lost a majority, answers no
// request until it has elected a meta leader (3 new servers take 0.3-0.7
// s), and a replicated stream or consumer none until it has elected its
// own. A request sent earlier goes unanswered: with a ctx that has no
// deadline, nats.go waits 5 s for it and fails, hence each attempt's own
// deadline.
func untilLed(ctx context.Context, open func(context.Context) error) error {
	wait, cancel := ctx, context.CancelFunc(func() {})
	within := "before ctx ended"
	if _, ok := ctx.Deadline(); !ok {
		wait, cancel = context.WithTimeout(ctx, leaderWait)
		within = fmt.Sprintf("within %v (Open's bound when ctx has no deadline)", leaderWait)
	}
	defer cancel()
	for attempt := 0; ; attempt++ {
		actx, acancel := context.WithTimeout(wait, min(firstAttempt<<min(attempt, 4), lastAttempt))
		err := open(actx)
		acancel()
		if err == nil || !leaderless(err) {
			return err
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			// A refusal comes at once; a timeout has waited already.
			_ = sleep(wait, min(100*time.Millisecond<<min(attempt, 4), time.Second))
		}
		if end := wait.Err(); end != nil {
			if errors.Is(err, end) {
				return fmt.Errorf("no leader was elected to answer %s: %w", within, end)
			}
			return fmt.Errorf("no leader was elected to answer %s (%w): %w", within, end, err)
		}
	}
}

// leaderless reports whether err says that no leader answered a request
// (it timed out) or that none is there to answer it.
func leaderless(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
		return true
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case errCodeClusterNotAvailable, errCodeStreamOffline, errCodeConsumerOffline:
			return true
		}
	}
	return false
}
