package natsqueue

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// PublishFunc is the signature of JetStream's PublishMsg.
type PublishFunc = publishFunc

// WrapPublish replaces the publish of q's Tell, and of the dead letters
// and relays of its Serves, with wrap(the current one).
func WrapPublish[T any](q *Queue[T], wrap func(PublishFunc) PublishFunc) {
	q.publish = wrap(q.publish)
}

// WrapDepthQuery replaces the query of q's depth refreshes with wrap(it).
func WrapDepthQuery[T any](q *Queue[T], wrap func(func(context.Context) (*jetstream.ConsumerInfo, error)) func(context.Context) (*jetstream.ConsumerInfo, error)) {
	q.depth.query = wrap(q.depth.query)
}

// Subject returns the subject q's jobs are published on.
func Subject[T any](q *Queue[T]) string { return q.subject }

// SetLeaderWait sets Open's wait for leaders when its ctx has no deadline
// to d until t's cleanup. Tests that call it must not run in parallel.
func SetLeaderWait(t testing.TB, d time.Duration) {
	old := leaderWait
	leaderWait = d
	t.Cleanup(func() { leaderWait = old })
}
