package natsqueue

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"time"

	"github.com/crewlib/crew"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	// fetchMaxWait is how long one pull request waits for jobs; it bounds
	// how long Serve takes to notice the end of its context when idle.
	fetchMaxWait = 500 * time.Millisecond
	// fetchHeartbeat is how often the server tells a pull request that
	// waits for jobs that it still holds it. Two missed in a row end the
	// pull at once (nats.go's ErrNoHeartbeat), and Serve pulls again: a
	// pull lost with the consumer's leader, or with the server the
	// connection was on, is found within 2 heartbeats rather than at its
	// expiry plus nats.go's second (1.5 s).
	fetchHeartbeat = 100 * time.Millisecond
	// maxPause bounds Serve's wait between pulls that fail (no consumer
	// answering while the cluster elects a leader, a lost connection): a
	// pull sent every maxPause costs little, and the wait is added to the
	// cluster's own once it answers again.
	maxPause = 250 * time.Millisecond
	// flushTimeout bounds Serve's final wait for the server to have
	// received its acknowledgements (a flush: the server has read them,
	// and applies them to the consumer a moment later).
	flushTimeout = 10 * time.Second
	// noRespondersChecks is how many pulls in a row may find no consumer
	// answering (the server restarting, or the consumer deleted) before
	// Serve asks the server whether the consumer still exists.
	noRespondersChecks = 3
)

// Serve runs q's jobs with handle on workers goroutines (a crew Pool) until
// ctx ends, then returns nil. It pulls only as many jobs as the pool has
// room for: one per worker plus the prefetch (WithPrefetch; one per worker
// by default), so processes of different speeds each take jobs in
// proportion to their speed.
//
// A job is acknowledged, and so removed from the queue, once handle returns
// nil. If handle returns an error or panics, the job is delivered again
// after the backoff (WithBackoff), to this process or another; if its
// delivery was the last allowed (WithMaxDeliveries), if the error wraps one
// made by Permanent, or if the message cannot be decoded, the job ends as a
// dead letter (WithDeadLetters) and is removed. From the moment a job
// arrives until it is settled (while it waits among the prefetched jobs,
// then while handle runs), Serve tells the server every AckWait/2 that the
// job is in progress, so that it is not given to another process; a
// process that dies holds its jobs for AckWait, after which they run
// elsewhere. Every job is therefore run at least once; exactly once when no
// process dies and no acknowledgement is lost.
//
// handle receives a context with ctx's values, and its delivery (see
// DeliveryFrom: the attempt, the job's message ID), that is not canceled
// when ctx ends: once ctx ends, Serve stops pulling, lets the jobs it
// holds run to completion, acknowledges them, and returns nil once the
// server its connection is on has received every acknowledgement it sent
// (a round trip on the connection, so that the process may exit at once
// without losing one): within half a second plus the time its held jobs
// take. The server applies an acknowledgement to the consumer a moment
// after it receives it, on a goroutine of its own (on a cluster, once the
// consumer's leader has it), so the consumer's counts read just after
// Serve returns (NumAckPending, a Queue's Len) may still include jobs
// Serve acknowledged; DoubleAck, which waits for that, would halve Serve's
// throughput. A lost connection or a restarting server does not end
// Serve: it pulls again once nats.go has reconnected. On a cluster, losing
// the consumer's leader or the server Serve's connection is on can lose
// its pull request, which Serve finds lost within two of the server's
// heartbeats (200 ms) and pulls again, and the jobs on their way to Serve:
// the server counts them delivered, so they run again only after AckWait.
// Serve returns an error, after the jobs it held have ended, when it
// cannot go on (the connection was closed; the consumer or its stream was
// deleted, which it finds after a few pulls that no consumer answers), or
// when some acknowledgements could not be sent: the error says how many,
// and their jobs are delivered again after AckWait.
//
// Options: WithBackoff, WithMaxDeliveries, WithDeadLetters, WithPrefetch
// and WithMetrics; the others panic. Serve panics if workers is less than 1,
// or q or handle is nil.
func Serve[T any](ctx context.Context, q *Queue[T], workers int, handle func(context.Context, T) error, opts ...Option) error {
	if workers < 1 {
		panic("natsqueue: Serve: workers must be at least 1, got " + strconv.Itoa(workers))
	}
	if q == nil {
		panic("natsqueue: Serve: nil Queue")
	}
	if handle == nil {
		panic("natsqueue: Serve: nil handler")
	}
	o := collect("Serve", serveOpts, opts)
	prefetch := o.prefetch
	if prefetch < 0 {
		prefetch = workers
	}
	capacity := workers + prefetch
	r := &runner[T]{
		q:             q,
		handle:        handle,
		backoff:       o.backoff,
		maxDeliveries: o.maxDeliveries,
		deadLetters:   o.deadLetters,
		room:          make(chan struct{}, capacity),
	}
	if o.metrics != nil {
		r.rec = o.metrics.Track(Source{Queue: q.name})
	}
	for range capacity {
		r.room <- struct{}{}
	}
	// The pool never blocks a Submit: it holds at least capacity jobs, and
	// Serve submits one only for a token taken from room.
	pool := crew.NewPool(workers, r.run,
		crew.WithName("natsqueue-"+q.name),
		crew.WithParent(context.WithoutCancel(ctx)),
		crew.WithQueueSize(prefetch/workers+2))
	err := r.pull(ctx, pool, capacity, max(1, min(prefetch, capacity/2)))
	if werr := pool.Wait(); err == nil {
		err = werr
	}
	if ferr := q.conn.FlushTimeout(flushTimeout); err == nil && ferr != nil && !q.conn.IsClosed() {
		err = fmt.Errorf("natsqueue: Serve %q: flushing acknowledgements: %w", q.name, ferr)
	}
	if n := r.unsent.Load(); n > 0 {
		err = errors.Join(err, fmt.Errorf("natsqueue: Serve %q: %d acknowledgements not sent; their jobs will be delivered again after AckWait", q.name, n))
	}
	if r.rec != nil {
		r.rec.Close() // after Wait: every worker's calls happen before it
	}
	return err
}

// pull fetches jobs into pool while there is room, until ctx ends (nil) or
// the consumer can no longer be read (an error). It fetches for room for low
// jobs at least: fetching as soon as one job ends would fetch one job per
// round trip, while low, no more than the prefetch, keeps the workers busy
// with the prefetched jobs during the round trip.
func (r *runner[T]) pull(ctx context.Context, pool *crew.Pool[delivery], capacity, low int) error {
	pause, noResponders := 0, 0
	for {
		n := 0
		for n < low {
			select {
			case <-ctx.Done():
				r.putBack(n)
				return nil
			case <-r.room:
				n++
			}
		}
		// Let jobs that are ending return their room before counting it:
		// with short jobs, the workers finish the rest of the batch while
		// this goroutine takes its low-th token, and one yield lets them,
		// so that a round trip asks for a full batch rather than for low
		// jobs and a few. With long jobs it costs a yield per round trip.
		runtime.Gosched()
	more:
		for n < capacity {
			select {
			case <-r.room:
				n++
			default:
				break more
			}
		}
		// Without this check, a select above that found both ctx ended
		// and room could pull again after ctx ended.
		if ctx.Err() != nil {
			r.putBack(n)
			return nil
		}
		got := 0
		batch, err := r.q.cons.Fetch(n, jetstream.FetchMaxWait(fetchMaxWait), jetstream.FetchHeartbeat(fetchHeartbeat))
		if err == nil {
			// Jobs are submitted as they arrive; the batch ends when n
			// have, or at fetchMaxWait. Submit never blocks: the pool
			// holds more jobs than Serve takes room for.
			for m := range batch.Messages() {
				if r.submit(pool, m) {
					got++
				}
			}
			err = batch.Error()
		}
		r.putBack(n - got)
		if err == nil || errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, jetstream.ErrNoHeartbeat) {
			pause, noResponders = 0, 0
			continue
		}
		if errors.Is(err, nats.ErrNoResponders) {
			if noResponders++; noResponders >= noRespondersChecks {
				noResponders = 0
				err = r.consumerGone(ctx, err)
			}
		}
		if err := r.failed(ctx, err, &pause); err != nil || ctx.Err() != nil {
			return err
		}
	}
}

// submit hands m to the pool with a keeper started at once, so that it is
// kept from redelivery while it waits there. If the pool refuses it, which
// it does not before Wait, m is delivered again at once.
func (r *runner[T]) submit(pool *crew.Pool[delivery], m jetstream.Msg) bool {
	d := delivery{m: m, k: keepAlive(m, r.q.ackWait/2)}
	if err := pool.Submit(context.Background(), d); err != nil {
		d.k.stop()
		r.sent(m.Nak())
		return false
	}
	return true
}

// consumerGone asks the server about the consumer after pulls that no
// consumer answered: it returns the answer if the consumer or its stream
// no longer exists, else err.
func (r *runner[T]) consumerGone(ctx context.Context, err error) error {
	// Not longer: while the cluster elects the consumer's leader, no one
	// answers, and Serve should pull again as soon as one is elected.
	ictx, cancel := context.WithTimeout(ctx, maxPause)
	defer cancel()
	_, ierr := r.q.cons.Info(ictx)
	if errors.Is(ierr, jetstream.ErrConsumerNotFound) || errors.Is(ierr, jetstream.ErrStreamNotFound) {
		return ierr
	}
	return err
}

// failed handles a fetch's error: it returns the error to end Serve with
// if the consumer can no longer be read; otherwise (disconnected, or the
// server is restarting) it waits a little longer each time, or until ctx
// ends, and returns nil.
func (r *runner[T]) failed(ctx context.Context, err error, pause *int) error {
	if fatal(err) {
		return fmt.Errorf("natsqueue: Serve %q: %w", r.q.name, err)
	}
	*pause = min(max(2**pause, 25), int(maxPause/time.Millisecond))
	_ = sleep(ctx, time.Duration(*pause)*time.Millisecond) // the caller looks at ctx
	return nil
}

// putBack returns n unused tokens to room.
func (r *runner[T]) putBack(n int) {
	for range n {
		r.room <- struct{}{}
	}
}

// fatal reports whether a fetch error means the consumer can no longer be
// read, rather than for now.
func fatal(err error) bool {
	return errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, jetstream.ErrConnectionClosed) ||
		errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound) ||
		errors.Is(err, jetstream.ErrStreamNotFound)
}
