package natsqueue

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// Headers natsqueue sets on a job's message, beside Nats-Msg-Id.
const (
	// idHeader carries the job's ID where Nats-Msg-Id cannot: on a
	// scheduled job (the server drops Nats-Msg-Id as it fires), a
	// replayed dead letter and a deferred job's relay.
	idHeader = "Natsqueue-Id"
	// notBeforeHeader holds when a delayed job may run, on a stream that
	// does not schedule jobs itself: Serve defers it until then.
	notBeforeHeader = "Natsqueue-Not-Before"
)

// scheduleSuffix is what the subject of a job's schedule adds to the
// queue's subject, with the schedule's own token in place of "*".
const scheduleSuffix = ".at.*"

// A TellOption changes how TellWith tells a job: when it may run (RunAt,
// RunAfter) or under which key it is stored once (UniqueKey).
type TellOption func(*tellOptions)

type tellOptions struct {
	at    time.Time     // zero: now
	after time.Duration // RunAfter's, from TellWith's call
	key   string        // "": a fresh message ID
}

// RunAt makes TellWith's job run no earlier than t, by the servers'
// clocks; a t already past runs it as soon as a worker is free. The job
// waits in the queue's stream (on 3 replicas, it survives a server's
// loss as any job does) and is not counted by Len until t. It panics if t
// is the zero time.
func RunAt(t time.Time) TellOption {
	if t.IsZero() {
		panic("natsqueue: RunAt: the zero time")
	}
	return func(o *tellOptions) { o.at, o.after = t, 0 }
}

// RunAfter makes TellWith's job run no earlier than d after TellWith is
// called (see RunAt); d ≤ 0 runs it as soon as a worker is free.
func RunAfter(d time.Duration) TellOption {
	return func(o *tellOptions) { o.at, o.after = time.Time{}, d }
}

// UniqueKey makes key the job's message ID, which the stream deduplicates
// by: a job told with a key that another one told within the stream's
// duplicate window (2 minutes by default, see WithDuplicateWindow) had is
// not stored, and TellWith returns ErrDuplicate. The key is then the ID
// a handler finds in its Delivery. It panics if key is empty or holds a
// line break, which a header cannot.
func UniqueKey(key string) TellOption {
	if key == "" || strings.ContainsAny(key, "\r\n") {
		panic(fmt.Sprintf("natsqueue: UniqueKey: %q is empty or holds a line break", key))
	}
	return func(o *tellOptions) { o.key = key }
}

// TellWith adds msg to the queue as Tell does, with opts: RunAt or
// RunAfter delay the job, and UniqueKey stores it once for a key.
//
// A delayed job runs no earlier than asked and at least once. On a stream
// that schedules messages (nats-server 2.12 and later; Open makes its
// streams so), the server holds the job's schedule and adds the job to
// the queue at its time, within a second on an idle server; the
// schedule is a message of the queue's stream, on its replicas. On a
// stream that does not (an older server, or a stream created beforehand
// without AllowMsgSchedules or the schedules' subject "natsqueue.<name>.at.*"),
// the job is added at once and Serve defers it: a delivery before its
// time is negatively acknowledged with a delay until then, and the first
// delivery at or after its time is told again as a new message (with the
// same ID) and acknowledged, so that the deferrals use none of the job's
// deliveries (WithMaxDeliveries); the job then waits among the
// consumer's acknowledgements pending, whose limit, MaxAckPending (1,000
// by default), it counts against until it runs.
//
// With UniqueKey, a duplicate is reported as ErrDuplicate when the
// first attempt's acknowledgement says so. A retry's duplicate (the
// acknowledgement of an earlier attempt was lost) is reported as success:
// the job of that key is stored, whichever Tell stored it.
func (q *Queue[T]) TellWith(ctx context.Context, msg T, opts ...TellOption) error {
	var o tellOptions
	for _, opt := range opts {
		if opt == nil {
			panic("natsqueue: TellWith: nil TellOption")
		}
		opt(&o)
	}
	if o.after != 0 {
		o.at = time.Now().Add(o.after)
	}
	return q.tell(ctx, msg, o)
}

// tell publishes msg as o asks, retrying as Tell says.
func (q *Queue[T]) tell(ctx context.Context, msg T, o tellOptions) error {
	data, err := q.codec.Marshal(msg)
	if err != nil {
		return fmt.Errorf("natsqueue: Tell %q: encoding: %w", q.name, err)
	}
	id := o.key
	if id == "" {
		id = nuid.Next()
	}
	m := &nats.Msg{Subject: q.subject, Data: data}
	if !o.at.IsZero() && time.Until(o.at) > 0 {
		m.Header = nats.Header{idHeader: []string{id}}
		at := o.at.UTC().Format(time.RFC3339Nano)
		if q.scheduled {
			// The schedule's subject is its own: the server keeps one
			// schedule per subject.
			m.Subject = q.subject + ".at." + nuid.Next()
			m.Header.Set(jetstream.MsgIDHeader, id) // PublishMsg sets it again
			m.Header.Set("Nats-Schedule", "@at "+at)
			m.Header.Set("Nats-Schedule-Target", q.subject)
		} else {
			m.Header.Set(notBeforeHeader, at)
		}
	}
	dup, err := publishOnce(ctx, q.publish, m, id, q.retryFor)
	switch {
	case err != nil && err == ctx.Err():
		return err
	case err != nil:
		return fmt.Errorf("natsqueue: Tell %q: %w", q.name, err)
	case dup && o.key != "":
		return about(fmt.Sprintf("Tell %q: key %q", q.name, o.key), ErrDuplicate)
	}
	return nil
}

// publishOnce publishes m with message ID id, retrying a publish whose
// acknowledgement does not come for as long as the retries fall within
// retryFor (the stream's duplicate window less one attempt) or ctx
// allows. It reports whether the first attempt's acknowledgement said m
// was a duplicate (a retry's says so of the attempt before it). Its
// errors are ctx's, or wrap the last publish's.
func publishOnce(ctx context.Context, publish publishFunc, m *nats.Msg, id string, retryFor time.Duration) (dup bool, err error) {
	start := time.Now()
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, publishAttemptTimeout)
		ack, err := publish(actx, m, jetstream.WithMsgID(id))
		cancel()
		if err == nil {
			return attempt == 1 && ack != nil && ack.Duplicate, nil
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if !retryable(err) {
			return false, err
		}
		wait := min(10*time.Millisecond<<min(attempt, 7), time.Second)
		if time.Since(start)+wait > retryFor {
			// A retry could arrive after the window and store m twice.
			return false, fmt.Errorf("no acknowledgement after %d attempts in %v (the stream's duplicate window less one attempt); the message may or may not have been stored: %w",
				attempt, time.Since(start).Round(time.Millisecond), err)
		}
		if err := sleep(ctx, wait); err != nil {
			return false, err
		}
	}
}
