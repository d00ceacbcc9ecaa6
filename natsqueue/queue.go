package natsqueue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// consumerName is the durable pull consumer every process of a queue shares.
const consumerName = "natsqueue"

// publishAttemptTimeout bounds one publish of Tell before it is retried.
const publishAttemptTimeout = 2 * time.Second

// defaultDuplicates is the server's duplicate window when a stream's
// configuration leaves it unset.
const defaultDuplicates = 2 * time.Minute

// The server's error codes for a consumer whose filter overlaps another's
// on a work-queue stream.
const (
	errCodeWQMultipleUnfiltered = 10099
	errCodeWQConsumerNotUnique  = 10100
)

// A Queue is a durable work queue of T jobs: a JetStream work-queue stream
// and the one durable pull consumer that every process serving it shares.
// Tell adds jobs; Serve runs them. A Queue is safe for concurrent use.
//
// Len and Busy make a Queue a crew.Routee, and Tell a crew.Teller, so that
// crew.NewPicker can choose among queues (regions, tenants) by depth. Unlike
// a crew mailbox's, a Queue's depths are approximate: they are the server's
// counts as last read, at most the depth TTL old (see WithDepthTTL), or the
// pending count the last delivered message carried.
type Queue[T any] struct {
	name    string
	subject string
	cons    jetstream.Consumer
	conn    *nats.Conn
	codec   Codec
	ackWait time.Duration
	// scheduled: the stream schedules delayed jobs itself (nats-server
	// 2.12 and later, a stream that allows it); otherwise Serve defers
	// them (see TellWith).
	scheduled bool
	// retryFor bounds Tell's retries: the stream's duplicate window less
	// one attempt, so that every retry is within the window.
	retryFor time.Duration
	depth    *depths
	dead     *DeadLetters
	// publish is js.PublishMsg; tests wrap it to lose acknowledgements.
	publish publishFunc
}

// publishFunc is the signature of JetStream's PublishMsg.
type publishFunc = func(ctx context.Context, m *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error)

// Open returns the queue called name, creating its stream and consumer if
// they do not exist; any number of processes may open the same queue at
// once. The stream, also called name, is a work-queue stream on file
// storage that takes the subject "natsqueue.<name>" and that of delayed
// jobs' schedules, "natsqueue.<name>.at.*", allows message schedules, and
// has the duplicate window of WithDuplicateWindow (the server's, 2
// minutes, by default) for Tell's retries and UniqueKey. A stream created
// beforehand may have a duplicate window of its own, which bounds Tell's
// retries, no schedules (Serve then defers delayed jobs: see TellWith),
// and limits (MaxMsgs, MaxBytes, MaxMsgsPerSubject) only with DiscardNew,
// so that a full queue refuses Tell rather than drop jobs. Beside it, Open
// creates the queue's dead-letter stream, "DEAD_<name>" (see DeadLetters),
// on the same replicas and with the same duplicate window. Its consumer is a durable pull consumer called "natsqueue" with
// explicit acks, the AckWait of WithAckWait, no delivery limit of the
// server's (Serve enforces WithMaxDeliveries) and the server's default
// MaxAckPending (1,000 jobs taken at once across all processes).
//
// Open waits for JetStream's leaders: a cluster that has just started, or
// has lost a majority of its servers, answers no request until it has
// elected a leader, and a replicated stream or consumer none until it has
// elected its own. Open sends its requests again until they are answered,
// for as long as ctx allows, or for at most 30 s if ctx has no deadline;
// then it returns an error that says no leader was elected, wrapping ctx's
// error or its own deadline's (context.DeadlineExceeded).
//
// Options: WithAckWait, WithCodec, WithDepthTTL, WithDuplicateWindow and
// WithReplicas; the others panic. If a stream or consumer of these names
// exists with a configuration the queue cannot use (another retention, no
// such subject, another AckWait, the replicas or duplicate window of an
// option given, or a setting that deletes jobs not yet run: a MaxAge, a
// limit with DiscardOld, memory storage; for the dead-letter stream, a
// retention other than Limits, or memory storage), or another consumer of
// the stream takes the same jobs, Open returns an error wrapping
// ErrIncompatible and changes nothing that existed (it may have created
// the queue's stream, if it did not exist, before it found its consumer
// incompatible). Other errors are the server's or the connection's,
// wrapped.
func Open[T any](ctx context.Context, js jetstream.JetStream, name string, opts ...Option) (*Queue[T], error) {
	if js == nil {
		panic("natsqueue: Open: nil JetStream")
	}
	o := collect("Open", openOpts, opts)
	subject := "natsqueue." + name
	var stream, dead jetstream.Stream
	var cons jetstream.Consumer
	err := untilLed(ctx, func(ctx context.Context) (err error) {
		// An existing dead-letter stream is checked before anything is
		// created.
		if dead, err = js.Stream(ctx, deadPrefix+name); err == nil {
			err = deadStreamFits(dead.CachedInfo().Config, subject+".dead", o.replicas)
		}
		if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return err
		}
		if stream, err = openStream(ctx, js, name, subject, o); err != nil {
			return err
		}
		if dead, err = openDeadStream(ctx, js, name, stream.CachedInfo().Config, o.replicas); err != nil {
			return err
		}
		cons, err = openConsumer(ctx, stream, subject, o.ackWait)
		return err
	})
	if err != nil {
		return nil, &openError{fn: "Open", name: name, err: err}
	}
	cfg := stream.CachedInfo().Config
	q := &Queue[T]{
		name:      name,
		subject:   subject,
		cons:      cons,
		conn:      js.Conn(),
		codec:     o.codec,
		ackWait:   o.ackWait,
		scheduled: cfg.AllowMsgSchedules && slices.Contains(cfg.Subjects, subject+scheduleSuffix),
		retryFor:  duplicates(cfg) - publishAttemptTimeout,
		depth:     newDepths(o.depthTTL, cons.Info),
		publish:   js.PublishMsg,
	}
	q.dead = newDeadLetters(js, name, subject, dead, cfg)
	q.depth.store(cons.CachedInfo())
	return q, nil
}

// duplicates returns the duplicate window of a stream of configuration cfg.
func duplicates(cfg jetstream.StreamConfig) time.Duration {
	if cfg.Duplicates <= 0 {
		return defaultDuplicates
	}
	return cfg.Duplicates
}

// openStream creates the queue's stream, with o's replicas (1 if none
// given) and duplicate window, taking the jobs' subject and that of their
// schedules, or binds to the existing one, which must keep jobs as a work
// queue and have the replicas and duplicate window o gives, if it gives
// them.
func openStream(ctx context.Context, js jetstream.JetStream, name, subject string, o options) (jetstream.Stream, error) {
	stream, err := js.Stream(ctx, name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		stream, err = js.CreateStream(ctx, jetstream.StreamConfig{
			Name:      name,
			Subjects:  []string{subject, subject + scheduleSuffix},
			Retention: jetstream.WorkQueuePolicy,
			Storage:   jetstream.FileStorage,
			Replicas:  max(o.replicas, 1),
			// A server before 2.12 ignores it: Serve defers delayed jobs.
			AllowMsgSchedules: true,
			Duplicates:        o.duplicates,
		})
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			// Another process created it first; check what it made.
			stream, err = js.Stream(ctx, name)
		}
	}
	if err != nil {
		return nil, err
	}
	cfg := stream.CachedInfo().Config
	if cfg.Retention != jetstream.WorkQueuePolicy {
		return nil, fmt.Errorf("%w: stream has retention %v, not WorkQueue", ErrIncompatible, cfg.Retention)
	}
	if !slices.Contains(cfg.Subjects, subject) {
		return nil, fmt.Errorf("%w: stream takes subjects %q, not %q", ErrIncompatible, cfg.Subjects, subject)
	}
	if err := keepsJobs(cfg); err != nil {
		return nil, err
	}
	if has := max(cfg.Replicas, 1); o.replicas != 0 && has != o.replicas {
		return nil, fmt.Errorf("%w: stream has %d replicas, Open was given WithReplicas(%d)", ErrIncompatible, has, o.replicas)
	}
	if has := duplicates(cfg); o.duplicates != 0 && has != o.duplicates {
		return nil, fmt.Errorf("%w: stream has a duplicate window of %v, Open was given WithDuplicateWindow(%v)", ErrIncompatible, has, o.duplicates)
	}
	return stream, nil
}

// keepsJobs returns an error wrapping ErrIncompatible if cfg lets the
// server delete jobs that have not run, with no error to Tell.
func keepsJobs(cfg jetstream.StreamConfig) error {
	const deletes = "which deletes jobs not yet run"
	switch {
	case cfg.Storage == jetstream.MemoryStorage:
		return fmt.Errorf("%w: stream keeps its jobs in memory, which a server restart loses", ErrIncompatible)
	case cfg.MaxAge > 0:
		return fmt.Errorf("%w: stream has MaxAge %v, %s", ErrIncompatible, cfg.MaxAge, deletes)
	case cfg.Discard == jetstream.DiscardNew:
		return nil // a full stream refuses Tell
	case cfg.MaxMsgs > 0:
		return fmt.Errorf("%w: stream has MaxMsgs %d with DiscardOld, %s", ErrIncompatible, cfg.MaxMsgs, deletes)
	case cfg.MaxBytes > 0:
		return fmt.Errorf("%w: stream has MaxBytes %d with DiscardOld, %s", ErrIncompatible, cfg.MaxBytes, deletes)
	case cfg.MaxMsgsPerSubject > 0:
		return fmt.Errorf("%w: stream has MaxMsgsPerSubject %d with DiscardOld, %s", ErrIncompatible, cfg.MaxMsgsPerSubject, deletes)
	}
	return nil
}

func openConsumer(ctx context.Context, stream jetstream.Stream, subject string, ackWait time.Duration) (jetstream.Consumer, error) {
	cons, err := stream.CreateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       consumerName,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       ackWait,
		MaxDeliver:    -1, // Serve ends jobs that failed too often itself, as dead letters
		FilterSubject: subject,
	})
	if errors.Is(err, jetstream.ErrConsumerExists) {
		// It exists with another configuration: say which part differs.
		cons, err = stream.Consumer(ctx, consumerName)
		if err != nil {
			return nil, err
		}
		cfg := cons.CachedInfo().Config
		switch {
		case cfg.AckWait != ackWait:
			return nil, fmt.Errorf("%w: consumer %q has AckWait %v, Open was given %v", ErrIncompatible, consumerName, cfg.AckWait, ackWait)
		case cfg.AckPolicy != jetstream.AckExplicitPolicy:
			return nil, fmt.Errorf("%w: consumer %q has ack policy %v, not explicit", ErrIncompatible, consumerName, cfg.AckPolicy)
		default:
			return nil, fmt.Errorf("%w: consumer %q: %w", ErrIncompatible, consumerName, jetstream.ErrConsumerExists)
		}
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode == errCodeWQMultipleUnfiltered || apiErr.ErrorCode == errCodeWQConsumerNotUnique) {
		return nil, fmt.Errorf("%w: another consumer of the stream takes the same jobs: %w", ErrIncompatible, err)
	}
	return cons, err
}

// Name returns the queue's name: its stream's.
func (q *Queue[T]) Name() string { return q.name }

// Tell adds msg to the queue and returns once the server has stored it.
// A publish whose acknowledgement does not come (a timeout, a lost
// connection, a restarting server, no stream answering) is retried with
// the same message ID, so that the server stores msg once, for as long as
// the retries fall within the stream's duplicate window (2 minutes by
// default, see WithDuplicateWindow): until the window less one attempt's
// timeout (2 s) has passed since the first attempt, or ctx ends. Then it
// returns an error wrapping the last publish's, or ctx.Err(). It also
// returns an error wrapping the codec's if msg cannot be encoded, and,
// wrapped, the server's refusal (a JetStream API error) or
// nats.ErrConnectionClosed. When Tell returns an error other than the
// codec's, msg may or may not have been stored. TellWith tells a job to
// run later, or once for a key.
func (q *Queue[T]) Tell(ctx context.Context, msg T) error {
	return q.tell(ctx, msg, tellOptions{})
}

// sleep waits for d, or until ctx ends, and then returns ctx.Err().
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	return ctx.Err()
}

// retryable reports whether a publish that failed with err may have gone
// unheard or unanswered, rather than been refused.
func retryable(err error) bool {
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, jetstream.ErrConnectionClosed),
		errors.Is(err, nats.ErrMaxPayload), errors.Is(err, nats.ErrBadHeaderMsg):
		return false
	case errors.As(err, &apiErr):
		return false
	}
	return true
}

// Len returns the number of jobs waiting plus those taken and not yet
// acknowledged, as last read (see Queue), or -1 until a read has
// succeeded. It never waits: a read older than the depth TTL starts a new
// one in the background and returns the old value.
func (q *Queue[T]) Len() int { return q.depth.len() }

// Busy reports whether, as last read, some jobs were taken and not yet
// acknowledged. Like Len, it never waits.
func (q *Queue[T]) Busy() bool { return q.depth.busy() }
