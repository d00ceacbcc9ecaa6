package natsqueue

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// deadPrefix begins the name of a queue's dead-letter stream, as KV_
// begins a key-value bucket's.
const deadPrefix = "DEAD_"

// The headers of a stored dead letter, beside the job's own and its ID
// (idHeader).
const (
	reasonHeader   = "Natsqueue-Reason"
	errorHeader    = "Natsqueue-Error"
	attemptsHeader = "Natsqueue-Attempts"
	sequenceHeader = "Natsqueue-Sequence"
	toldHeader     = "Natsqueue-Told"
)

// maxErrorHeader bounds the error's text a dead letter stores.
const maxErrorHeader = 1024

// The reasons of stored dead letters (DeadLetter.Reason).
const (
	// ReasonPermanent: the handler returned an error made by Permanent.
	ReasonPermanent = "permanent"
	// ReasonTooManyDeliveries: the job failed on its last allowed
	// delivery, or was delivered more often than allowed.
	ReasonTooManyDeliveries = "too many deliveries"
	// ReasonUndecodable: the codec could not decode the message.
	ReasonUndecodable = "undecodable"
)

// A DeadLetter is a job that ended without success, as stored in its
// queue's dead-letter stream: what Serve knew when it gave up, and the
// job's message as told, so that Replay can tell it again.
type DeadLetter struct {
	// Seq is the dead letter's sequence number in the dead-letter stream:
	// what Get, Replay and Purge take.
	Seq uint64
	// Queue is the queue's name.
	Queue string
	// ID is the job's ID, as its handler found it in Delivery.ID.
	ID string
	// Reason is why the job ended: ReasonPermanent,
	// ReasonTooManyDeliveries or ReasonUndecodable.
	Reason string
	// Error is the text of the error that ended it (its first line: a
	// panic's stack is left out).
	Error string
	// Attempts is how many times the job had been delivered.
	Attempts int
	// Sequence is the job's sequence number in the queue's stream.
	Sequence uint64
	// Told is when the queue's stream stored the job; Died, when the
	// dead-letter stream stored the dead letter.
	Told, Died time.Time
	// Data is the job's message body, as its codec encoded it.
	Data []byte
	// Header holds the job's message headers other than those of NATS
	// and natsqueue (none, for a job told by Tell).
	Header nats.Header
}

// DeadLetters is the dead-letter stream of a queue: where Serve stores
// every job that ends without success, before it removes the job from
// the queue, and from which such jobs can be listed, told again (Replay)
// and deleted (Purge). The stream is called "DEAD_<name>", takes the
// subject "natsqueue.<name>.dead", keeps its messages on file with the
// queue stream's replicas and no limit, and is created by Open beside the
// queue's. A DeadLetters is safe for concurrent use.
type DeadLetters struct {
	js      jetstream.JetStream
	queue   string
	subject string // the queue's
	dead    string // the dead letters' subject
	stream  jetstream.Stream
	// The bounds on the retries of a replay (in the queue's duplicate
	// window) and of a store (in the dead-letter stream's).
	replayFor, storeFor time.Duration
}

// newDeadLetters returns the dead letters of the queue called name, whose
// jobs' subject is subject and stream's configuration queue, in stream.
func newDeadLetters(js jetstream.JetStream, name, subject string, stream jetstream.Stream, queue jetstream.StreamConfig) *DeadLetters {
	return &DeadLetters{js: js, queue: name, subject: subject, dead: subject + ".dead", stream: stream,
		replayFor: duplicates(queue) - publishAttemptTimeout,
		storeFor:  duplicates(stream.CachedInfo().Config) - publishAttemptTimeout}
}

// DeadLetters returns the queue's dead letters.
func (q *Queue[T]) DeadLetters() *DeadLetters { return q.dead }

// Decode returns the job d holds, decoded with the queue's codec.
func (q *Queue[T]) Decode(d DeadLetter) (T, error) {
	var job T
	err := q.codec.Unmarshal(d.Data, &job)
	return job, err
}

// OpenDeadLetters returns the dead letters of the queue called name,
// which must exist (Open made it): unlike Open, it creates nothing, so
// that a tool given a wrong name finds no queue rather than makes one. It
// waits for leaders as Open does; it returns an error wrapping
// jetstream.ErrStreamNotFound if the queue or its dead-letter stream does
// not exist, and ErrIncompatible if the dead-letter stream is not one
// Open makes.
func OpenDeadLetters(ctx context.Context, js jetstream.JetStream, name string) (*DeadLetters, error) {
	if js == nil {
		panic("natsqueue: OpenDeadLetters: nil JetStream")
	}
	subject := "natsqueue." + name
	var stream, dead jetstream.Stream
	err := untilLed(ctx, func(ctx context.Context) (err error) {
		if stream, err = js.Stream(ctx, name); err != nil {
			return fmt.Errorf("the queue's stream %q: %w", name, err)
		}
		if dead, err = js.Stream(ctx, deadPrefix+name); err != nil {
			return fmt.Errorf("dead-letter stream %q: %w", deadPrefix+name, err)
		}
		return deadStreamFits(dead.CachedInfo().Config, subject+".dead", 0)
	})
	if err != nil {
		return nil, &openError{fn: "OpenDeadLetters", name: name, err: err}
	}
	return newDeadLetters(js, name, subject, dead, stream.CachedInfo().Config), nil
}

// openDeadStream creates the dead-letter stream of the queue called name,
// whose stream's configuration is queue, with its replicas and duplicate
// window, or binds to the existing one, which must fit (see
// deadStreamFits) with want replicas if want is not 0.
func openDeadStream(ctx context.Context, js jetstream.JetStream, name string, queue jetstream.StreamConfig, want int) (jetstream.Stream, error) {
	subject := "natsqueue." + name + ".dead"
	stream, err := js.Stream(ctx, deadPrefix+name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		stream, err = js.CreateStream(ctx, jetstream.StreamConfig{
			Name:       deadPrefix + name,
			Subjects:   []string{subject},
			Retention:  jetstream.LimitsPolicy,
			Storage:    jetstream.FileStorage,
			Replicas:   max(queue.Replicas, 1),
			Duplicates: queue.Duplicates,
		})
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			stream, err = js.Stream(ctx, deadPrefix+name)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := deadStreamFits(stream.CachedInfo().Config, subject, want); err != nil {
		return nil, err
	}
	return stream, nil
}

// deadStreamFits returns an error wrapping ErrIncompatible if a stream
// of configuration cfg cannot keep a queue's dead letters on subject: it
// must take the subject, keep messages until they are deleted (limits
// retention: the limits are the user's to set) on file, take no other
// subject (Count and PurgeAll take the whole stream), and have want
// replicas if want is not 0.
func deadStreamFits(cfg jetstream.StreamConfig, subject string, want int) error {
	switch {
	case cfg.Retention != jetstream.LimitsPolicy:
		return fmt.Errorf("%w: dead-letter stream %q has retention %v, not Limits", ErrIncompatible, cfg.Name, cfg.Retention)
	case !slices.Equal(cfg.Subjects, []string{subject}):
		// Count and PurgeAll take the whole stream.
		return fmt.Errorf("%w: dead-letter stream %q takes subjects %q, not only %q", ErrIncompatible, cfg.Name, cfg.Subjects, subject)
	case cfg.Storage == jetstream.MemoryStorage:
		return fmt.Errorf("%w: dead-letter stream %q keeps its messages in memory, which a server restart loses", ErrIncompatible, cfg.Name)
	case want != 0 && max(cfg.Replicas, 1) != want:
		return fmt.Errorf("%w: dead-letter stream %q has %d replicas, Open was given WithReplicas(%d)", ErrIncompatible, cfg.Name, max(cfg.Replicas, 1), want)
	}
	return nil
}

// letter returns the dead letter stored as m.
func (dl *DeadLetters) letter(m *jetstream.RawStreamMsg) DeadLetter {
	d := DeadLetter{
		Seq: m.Sequence, Queue: dl.queue, Died: m.Time, Data: m.Data,
		ID:     m.Header.Get(idHeader),
		Reason: m.Header.Get(reasonHeader),
		Error:  m.Header.Get(errorHeader),
	}
	d.Attempts, _ = strconv.Atoi(m.Header.Get(attemptsHeader))
	d.Sequence, _ = strconv.ParseUint(m.Header.Get(sequenceHeader), 10, 64)
	d.Told, _ = time.Parse(time.RFC3339Nano, m.Header.Get(toldHeader))
	if h := jobHeaders(m.Header); len(h) > 0 {
		d.Header = h
	}
	return d
}

// Count returns how many dead letters the stream holds.
func (dl *DeadLetters) Count(ctx context.Context) (int, error) {
	info, err := dl.stream.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("natsqueue: dead letters of %q: %w", dl.queue, err)
	}
	return int(info.State.Msgs), nil
}

// Get returns the dead letter of sequence seq, or an error wrapping
// ErrNoDeadLetter if there is none.
func (dl *DeadLetters) Get(ctx context.Context, seq uint64) (DeadLetter, error) {
	var m *jetstream.RawStreamMsg
	var err error = jetstream.ErrMsgNotFound // sequences begin at 1
	if seq > 0 {
		m, err = dl.stream.GetMsg(ctx, seq)
	}
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return DeadLetter{}, about(fmt.Sprintf("dead letters of %q: %d", dl.queue, seq), ErrNoDeadLetter)
	}
	if err != nil {
		return DeadLetter{}, fmt.Errorf("natsqueue: dead letters of %q: getting %d: %w", dl.queue, seq, err)
	}
	return dl.letter(m), nil
}

// All yields the dead letters in the order they were stored, one server
// request each, from the first to the last stored when All began; it
// stops at the first error, which it yields with a zero DeadLetter.
func (dl *DeadLetters) All(ctx context.Context) iter.Seq2[DeadLetter, error] {
	return func(yield func(DeadLetter, error) bool) {
		info, err := dl.stream.Info(ctx)
		if err != nil {
			yield(DeadLetter{}, fmt.Errorf("natsqueue: dead letters of %q: %w", dl.queue, err))
			return
		}
		last := info.State.LastSeq
		for seq := info.State.FirstSeq; seq <= last && seq > 0; {
			m, err := dl.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(dl.dead))
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				return // none left at or after seq
			}
			if err != nil {
				yield(DeadLetter{}, fmt.Errorf("natsqueue: dead letters of %q: getting from %d: %w", dl.queue, seq, err))
				return
			}
			if m.Sequence > last || !yield(dl.letter(m), nil) {
				return
			}
			seq = m.Sequence + 1
		}
	}
}

// Replay tells the job of the dead letter seq again, as a new job (its
// first delivery, with all its deliveries ahead of it, and the same ID and
// headers), then deletes the dead letter. It returns an error wrapping
// ErrNoDeadLetter if there is none. The job is stored before the dead
// letter is deleted: if Replay fails in between, the dead letter remains,
// and a Replay of it within the queue's duplicate window stores the job
// once.
func (dl *DeadLetters) Replay(ctx context.Context, seq uint64) error {
	d, err := dl.Get(ctx, seq)
	if err != nil {
		return err
	}
	return dl.replay(ctx, d)
}

func (dl *DeadLetters) replay(ctx context.Context, d DeadLetter) error {
	h := nats.Header{}
	for k, v := range d.Header {
		h[k] = v
	}
	if d.ID != "" {
		h.Set(idHeader, d.ID)
	}
	// The replay's own ID: a Replay retried stores the job once.
	msgID := fmt.Sprintf("replay:%s:%d:%s", d.Died.UTC().Format(time.RFC3339Nano), d.Seq, d.ID)
	if _, err := publishOnce(ctx, dl.js.PublishMsg, &nats.Msg{Subject: dl.subject, Header: h, Data: d.Data}, msgID, dl.replayFor); err != nil {
		return fmt.Errorf("natsqueue: dead letters of %q: replaying %d: %w", dl.queue, d.Seq, err)
	}
	if err := dl.stream.DeleteMsg(ctx, d.Seq); err != nil {
		return fmt.Errorf("natsqueue: dead letters of %q: %d replayed, but not deleted: %w", dl.queue, d.Seq, err)
	}
	return nil
}

// ReplayAll replays (see Replay) each dead letter for which match returns
// true, all of them if match is nil, in the order they were stored, and
// returns how many it replayed, up to its first error.
func (dl *DeadLetters) ReplayAll(ctx context.Context, match func(DeadLetter) bool) (int, error) {
	return dl.each(ctx, match, dl.replay)
}

// Purge deletes the dead letter seq. It returns an error wrapping
// ErrNoDeadLetter if there is none.
func (dl *DeadLetters) Purge(ctx context.Context, seq uint64) error {
	d, err := dl.Get(ctx, seq)
	if err != nil {
		return err
	}
	return dl.purge(ctx, d)
}

func (dl *DeadLetters) purge(ctx context.Context, d DeadLetter) error {
	if err := dl.stream.DeleteMsg(ctx, d.Seq); err != nil {
		return fmt.Errorf("natsqueue: dead letters of %q: deleting %d: %w", dl.queue, d.Seq, err)
	}
	return nil
}

// PurgeAll deletes each dead letter for which match returns true, and
// returns how many it deleted, up to its first error. With a nil match it
// purges the stream at once, and returns how many it held just before
// (a dead letter stored meanwhile is purged, and not counted).
func (dl *DeadLetters) PurgeAll(ctx context.Context, match func(DeadLetter) bool) (int, error) {
	if match != nil {
		return dl.each(ctx, match, dl.purge)
	}
	n, err := dl.Count(ctx)
	if err != nil {
		return 0, err
	}
	if err := dl.stream.Purge(ctx); err != nil {
		return 0, fmt.Errorf("natsqueue: dead letters of %q: purging: %w", dl.queue, err)
	}
	return n, nil
}

// each calls do for each dead letter that match selects (all if nil), and
// returns how many calls succeeded, up to the first error.
func (dl *DeadLetters) each(ctx context.Context, match func(DeadLetter) bool, do func(context.Context, DeadLetter) error) (int, error) {
	n := 0
	for d, err := range dl.All(ctx) {
		if err != nil {
			return n, err
		}
		if match != nil && !match(d) {
			continue
		}
		if err := do(ctx, d); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
