package natsqueue

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crewlib/crew"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A runner runs one Serve's jobs: it is the handler of Serve's pool.
type runner[T any] struct {
	q             *Queue[T]
	handle        func(context.Context, T) error
	backoff       func(attempt int) time.Duration
	maxDeliveries int
	deadLetters   func(crew.DeadLetter)
	rec           Recorder      // nil: no WithMetrics, nothing measured
	room          chan struct{} // a token per job Serve may hold; run returns its job's
	unsent        atomic.Int64  // acknowledgements (Ack, Nak, Term) that failed
}

// A delivery is a message Serve took and the keeper that has kept it from
// redelivery since it arrived: a job waiting in the pool's backlog is held
// as long as a running one.
type delivery struct {
	m jetstream.Msg
	k *keeper
}

// run settles one message: acknowledged, delivered again later, or a dead
// letter. It returns nil always: the pool has no error to report.
func (r *runner[T]) run(ctx context.Context, d delivery) error {
	defer func() { r.room <- struct{}{} }()
	// Stopped again before each acknowledgement, so that no progress
	// signal follows it; this one also covers a handler that calls
	// runtime.Goexit.
	defer d.k.stop()
	m := d.m
	md, err := m.Metadata()
	if err != nil {
		r.add(EventDelivery)
		r.dead(d, nil, m.Data(), fmt.Errorf("%w: %w", ErrUndecodable, err))
		return nil
	}
	r.q.depth.observe(md.NumPending)
	if nb := m.Headers().Get(notBeforeHeader); nb != "" && r.relayDelayed(d, md, nb) {
		return nil
	}
	attempt := int(md.NumDelivered)
	if attempt > 1 {
		r.add(EventRedelivery)
	} else {
		r.add(EventDelivery)
	}
	var job T
	if err := r.q.codec.Unmarshal(m.Data(), &job); err != nil {
		r.dead(d, md, m.Data(), fmt.Errorf("%w: %w", ErrUndecodable, err))
		return nil
	}
	if attempt > r.maxDeliveries {
		// Its process died during its last allowed delivery.
		r.dead(d, md, job, fmt.Errorf("%w: delivered %d times, at most %d allowed", ErrTooManyDeliveries, attempt, r.maxDeliveries))
		return nil
	}
	err = r.call(withDelivery(ctx, m, md), job)
	switch {
	case err == nil:
		d.k.stop()
		if r.sent(m.Ack()) && r.rec != nil {
			r.rec.Add(EventAck, 1)
			// md.Timestamp has no monotonic reading: this is the wall
			// clock's difference, negative if the server's runs ahead.
			r.rec.Observe(TellToAck, max(time.Since(md.Timestamp), 0))
		}
	case isPermanent(err):
		r.dead(d, md, job, err)
	case attempt >= r.maxDeliveries:
		r.dead(d, md, job, fmt.Errorf("%w: failed on delivery %d of %d: %w", ErrTooManyDeliveries, attempt, r.maxDeliveries, err))
	default:
		delay := r.delay(attempt)
		d.k.stop()
		if r.sent(m.NakWithDelay(delay)) && r.rec != nil {
			r.rec.Add(EventNak, 1)
			r.rec.Observe(NakDelay, delay)
		}
	}
	return nil
}

// call runs the handler, turning a panic into an error with its stack,
// and observes its run time.
func (r *runner[T]) call(ctx context.Context, job T) (err error) {
	var start time.Time
	if r.rec != nil {
		start = time.Now()
	}
	defer func() {
		if v := recover(); v != nil {
			// No "natsqueue: ": a dead letter's reason wraps it in
			// ErrTooManyDeliveries, whose text begins so.
			err = fmt.Errorf("handler panicked: %v\n%s", v, debug.Stack())
		}
		if r.rec != nil {
			r.rec.Observe(RunTime, time.Since(start))
		}
	}()
	return r.handle(ctx, job)
}

// add counts one event of kind e, if Serve has a Recorder.
func (r *runner[T]) add(e Event) {
	if r.rec != nil {
		r.rec.Add(e, 1)
	}
}

// delay returns the backoff after the attempt-th delivery failed; if the
// backoff panics, it logs the panic and returns DefaultBackoff's, so that
// the job is still delivered again.
func (r *runner[T]) delay(attempt int) (d time.Duration) {
	defer func() {
		if v := recover(); v != nil {
			slog.Error("natsqueue: backoff panicked; using DefaultBackoff", "queue", r.q.name, "panic", v, "stack", string(debug.Stack()))
			d = DefaultBackoff(attempt)
		}
	}()
	return r.backoff(attempt)
}

// dead stores the job's dead letter, hands it to the dead-letter sink, and
// then removes its message, even if the sink panicked (the panic is
// logged). If the dead letter cannot be stored, the message is neither
// handed to the sink nor removed: it is delivered again after the
// backoff, and run again (a job that failed with Permanent before its
// last delivery runs its handler again; one on its last delivery, or
// undecodable, ends as a dead letter again). md is nil if m had no
// metadata.
func (r *runner[T]) dead(d delivery, md *jetstream.MsgMetadata, job any, reason error) {
	if err := r.q.dead.store(context.Background(), r.q.publish, d.m, md, reason, r.storeFor()); err != nil {
		attempt := 1
		if md != nil {
			attempt = int(md.NumDelivered)
		}
		delay := r.delay(attempt)
		slog.Error("natsqueue: dead letter not stored; the job will be delivered again", "queue", r.q.name, "reason", reason, "err", err, "after", delay)
		d.k.stop()
		if r.sent(d.m.NakWithDelay(delay)) && r.rec != nil {
			r.rec.Add(EventNak, 1)
			r.rec.Observe(NakDelay, delay)
		}
		return
	}
	func() {
		defer func() {
			if v := recover(); v != nil {
				slog.Error("natsqueue: dead-letter sink panicked", "queue", r.q.name, "reason", reason, "panic", v, "stack", string(debug.Stack()))
			}
		}()
		r.deadLetters(crew.DeadLetter{Message: job, Target: r.q.name, Reason: reason})
	}()
	d.k.stop()
	if r.sent(d.m.TermWithReason(firstLine(reason.Error()))) {
		r.add(EventDeadLetter)
	}
}

// relayDelayed settles a delayed job on a stream that does not schedule jobs
// (see TellWith), whose time is nb, and reports whether it did: before
// it, the job is delivered again at nb; at or after it, it is told again
// as a new message, without a time, and this one acknowledged, so that
// the deferrals used none of the job's deliveries. Neither counts as an
// event: the new message is the job's first delivery. If the new message
// may not have been stored (no acknowledgement), this one is delivered
// again after the first backoff, and told again then (once, within the
// duplicate window: its message ID is this one's sequence). If the
// stream refuses it (full, with DiscardNew), it reports false: the job
// runs as this message, its deferrals counted among its deliveries.
func (r *runner[T]) relayDelayed(d delivery, md *jetstream.MsgMetadata, nb string) bool {
	m := d.m
	at, err := time.Parse(time.RFC3339Nano, nb)
	if wait := time.Until(at); err == nil && wait > 0 {
		d.k.stop()
		r.sent(m.NakWithDelay(wait))
		return true
	}
	h := jobHeaders(m.Headers()) // without its time
	id := jobID(m.Headers())
	h.Set(idHeader, id)
	relay := &nats.Msg{Subject: r.q.subject, Header: h, Data: m.Data()}
	if _, err := publishOnce(context.Background(), r.q.publish, relay, "due:"+strconv.FormatUint(md.Sequence.Stream, 10)+":"+id, r.storeFor()); err != nil {
		if !retryable(err) {
			slog.Warn("natsqueue: a delayed job's time came, and the stream refused it as a new message; running it as it is", "queue", r.q.name, "err", err)
			return false
		}
		slog.Warn("natsqueue: a delayed job's time came, and it could not be told again; retrying", "queue", r.q.name, "err", err)
		d.k.stop()
		r.sent(m.NakWithDelay(r.delay(1)))
		return true
	}
	d.k.stop()
	r.sent(m.Ack())
	return true
}

// storeFor bounds the retries of a publish a worker makes for a job it
// holds (its dead letter, a delayed job's relay): AckWait, within which
// the job comes again if the publish gives up, and at most the stream's
// duplicate window less one attempt.
func (r *runner[T]) storeFor() time.Duration {
	return min(r.q.retryFor, r.q.ackWait)
}

// sent reports whether an acknowledgement was sent, given its error; it
// counts and logs a failed one, whose job is then delivered again after
// AckWait.
func (r *runner[T]) sent(err error) bool {
	if err != nil {
		r.unsent.Add(1)
		slog.Warn("natsqueue: acknowledgement failed; the job will be delivered again", "queue", r.q.name, "err", err)
		return false
	}
	return true
}

// firstLine returns s up to its first newline: a Term's reason is one
// line, without a panic's stack.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// A keeper tells the server every period that its job is in progress. It
// uses a timer, not a goroutine: each tick runs on the timer's own
// short-lived goroutine.
type keeper struct {
	m      jetstream.Msg
	period time.Duration
	// mu guards t and stopped, and is held across InProgress, so that no
	// progress signal follows the return of stop (and the ack after it).
	mu      sync.Mutex
	t       *time.Timer
	stopped bool
}

// keepAlive starts a keeper of m that signals every period.
func keepAlive(m jetstream.Msg, period time.Duration) *keeper {
	k := &keeper{m: m, period: period}
	k.mu.Lock()
	k.t = time.AfterFunc(period, k.tick)
	k.mu.Unlock()
	return k
}

func (k *keeper) tick() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return
	}
	_ = k.m.InProgress() // if lost, the next tick follows before AckWait
	k.t.Reset(k.period)
}

// stop ends the signals; once it returns, none follows. It may be called
// more than once.
func (k *keeper) stop() {
	k.mu.Lock()
	k.stopped = true
	k.t.Stop()
	k.mu.Unlock()
}
