package natsqueue

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/crewlib/crew"
	"github.com/nats-io/nats.go/jetstream"
)

// A runner runs one Serve's jobs: it is the handler of Serve's pool.
type runner[T any] struct {
	q             *Queue[T]
	handle        func(context.Context, T) error
	backoff       func(attempt int) time.Duration
	maxDeliveries int
	deadLetters   func(crew.DeadLetter)
	room          chan struct{} // a token per job Serve may hold; run returns its job's
}

// run settles one message: acknowledged, delivered again later, or a dead
// letter. It returns nil always: the pool has no error to report.
func (r *runner[T]) run(ctx context.Context, m jetstream.Msg) error {
	defer func() { r.room <- struct{}{} }()
	md, err := m.Metadata()
	if err != nil {
		r.dead(m, m.Data(), fmt.Errorf("%w: %w", ErrUndecodable, err))
		return nil
	}
	r.q.depth.observe(md.NumPending)
	attempt := int(md.NumDelivered)
	if attempt > r.maxDeliveries {
		// Its process died during its last allowed delivery.
		r.dead(m, m.Data(), fmt.Errorf("%w: delivered %d times, at most %d allowed", ErrTooManyDeliveries, attempt, r.maxDeliveries))
		return nil
	}
	var job T
	if err := r.q.codec.Unmarshal(m.Data(), &job); err != nil {
		r.dead(m, m.Data(), fmt.Errorf("%w: %w", ErrUndecodable, err))
		return nil
	}
	k := keepAlive(m, r.q.ackWait/2)
	err = r.call(ctx, job)
	k.stop()
	switch {
	case err == nil:
		if aerr := m.Ack(); aerr != nil {
			logAckFailure(r.q.name, aerr)
		}
	case isPermanent(err):
		r.dead(m, job, err)
	case attempt >= r.maxDeliveries:
		r.dead(m, job, fmt.Errorf("%w: failed on delivery %d of %d: %w", ErrTooManyDeliveries, attempt, r.maxDeliveries, err))
	default:
		if nerr := m.NakWithDelay(r.backoff(attempt)); nerr != nil {
			logAckFailure(r.q.name, nerr)
		}
	}
	return nil
}

// call runs the handler, turning a panic into an error with its stack.
func (r *runner[T]) call(ctx context.Context, job T) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("natsqueue: handler panicked: %v\n%s", v, debug.Stack())
		}
	}()
	return r.handle(ctx, job)
}

// dead hands the job to the dead-letter sink, then removes its message.
func (r *runner[T]) dead(m jetstream.Msg, job any, reason error) {
	r.deadLetters(crew.DeadLetter{Message: job, Target: r.q.name, Reason: reason})
	if err := m.TermWithReason(reason.Error()); err != nil {
		logAckFailure(r.q.name, err)
	}
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

func (k *keeper) stop() {
	k.mu.Lock()
	k.stopped = true
	k.t.Stop()
	k.mu.Unlock()
}
