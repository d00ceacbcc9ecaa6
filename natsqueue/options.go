package natsqueue

import (
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/crewlib/crew"
)

// Defaults of the options. Open's: DefaultAckWait, DefaultDepthTTL and the
// JSON codec. Serve's: DefaultMaxDeliveries, DefaultBackoff, a prefetch of
// one job per worker, and dead letters logged with slog.
const (
	// DefaultAckWait is how long a job may run unacknowledged before the
	// server gives it to another consumer, unless Serve keeps it alive
	// (it does, every AckWait/2, while its handler runs).
	DefaultAckWait = 30 * time.Second
	// DefaultMaxDeliveries is how many times a job is delivered before a
	// failure ends it as a dead letter.
	DefaultMaxDeliveries = 5
	// DefaultDepthTTL is how long Len and Busy reuse a depth read from the
	// server before they ask again.
	DefaultDepthTTL = 100 * time.Millisecond
)

// DefaultBackoff is the retry delay after a job's attempt-th delivery
// failed: 100 ms doubled for each further attempt, at most 10 s.
func DefaultBackoff(attempt int) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	if attempt > 8 {
		return 10 * time.Second
	}
	return min(100*time.Millisecond<<(attempt-1), 10*time.Second)
}

// An Option configures Open or Serve. Each option's comment says which of
// the two takes it; giving one to the other panics with a natsqueue:
// message, so that a setting never goes silently unused.
type Option func(*options)

type optSet uint

const (
	optAckWait optSet = 1 << iota
	optCodec
	optDepthTTL
	optBackoff
	optMaxDeliveries
	optDeadLetters
	optPrefetch
	optReplicas
	optMetrics
	optDuplicates
)

var optNames = [...]string{
	"WithAckWait (for Open)",
	"WithCodec (for Open)",
	"WithDepthTTL (for Open)",
	"WithBackoff (for Serve)",
	"WithMaxDeliveries (for Serve)",
	"WithDeadLetters (for Serve)",
	"WithPrefetch (for Serve)",
	"WithReplicas (for Open)",
	"WithMetrics (for Serve)",
	"WithDuplicateWindow (for Open)",
}

const (
	openOpts  = optAckWait | optCodec | optDepthTTL | optReplicas | optDuplicates
	serveOpts = optBackoff | optMaxDeliveries | optDeadLetters | optPrefetch | optMetrics
)

type options struct {
	set           optSet
	ackWait       time.Duration
	codec         Codec
	depthTTL      time.Duration
	backoff       func(attempt int) time.Duration
	maxDeliveries int
	deadLetters   func(crew.DeadLetter)
	prefetch      int // -1: one per worker
	replicas      int // 0: not given
	metrics       Metrics
	duplicates    time.Duration // 0: not given
}

// collect applies opts over the defaults and panics if one does not apply
// to fn.
func collect(fn string, allowed optSet, opts []Option) options {
	o := options{
		ackWait:       DefaultAckWait,
		codec:         JSON{},
		depthTTL:      DefaultDepthTTL,
		backoff:       DefaultBackoff,
		maxDeliveries: DefaultMaxDeliveries,
		deadLetters:   logDeadLetter,
		prefetch:      -1,
	}
	for _, opt := range opts {
		if opt == nil {
			panic("natsqueue: " + fn + ": nil Option")
		}
		opt(&o)
	}
	if extra := o.set &^ allowed; extra != 0 {
		for i, name := range optNames {
			if extra&(1<<i) != 0 {
				panic("natsqueue: " + fn + ": " + name + " does not apply")
			}
		}
	}
	return o
}

// WithAckWait sets how long a job taken by a worker may go unacknowledged
// before the server redelivers it to another (for Open; default
// DefaultAckWait, 30 s). It is the time a dead process holds its jobs
// before they run elsewhere. Serve keeps a longer-running job alive with a
// progress signal every d/2, so d bounds the delay after a crash, not a
// job's length. It is stored in the durable consumer: every Open of the
// same queue must give the same d. It panics if d is under 100 ms.
func WithAckWait(d time.Duration) Option {
	if d < 100*time.Millisecond {
		panic("natsqueue: WithAckWait: " + d.String() + " is under 100ms")
	}
	return func(o *options) { o.set |= optAckWait; o.ackWait = d }
}

// WithReplicas makes Open create the queue's stream with n copies, on n
// servers of a JetStream cluster (for Open; default 1): with 3, the queue
// loses no job and stays available when any one server is lost, the
// stream's leader included, as JetStream elects another. n goes from 1 to
// 5, JetStream's range; with more than the cluster has servers, Open
// returns the server's error. Without it, Open binds to an existing
// stream whatever its replicas; with it, Open refuses one with other
// replicas, with an error wrapping ErrIncompatible, and changes nothing.
// It panics if n is not between 1 and 5.
func WithReplicas(n int) Option {
	if n < 1 || n > 5 {
		panic(fmt.Sprintf("natsqueue: WithReplicas: n must be between 1 and 5, got %d", n))
	}
	return func(o *options) { o.set |= optReplicas; o.replicas = n }
}

// WithDuplicateWindow makes Open create the queue's stream with a
// duplicate window of d (for Open; default the server's, 2 minutes): the
// time within which a job told again with the same UniqueKey is stored
// once, and the bound on Tell's retries of a publish whose acknowledgement
// was lost. Without it, Open binds to an existing stream whatever its
// window; with it, Open refuses one with another window, with an error
// wrapping ErrIncompatible, and changes nothing. It panics if d is under
// 3 s (one Tell attempt's timeout, 2 s, plus a second of retries).
func WithDuplicateWindow(d time.Duration) Option {
	if d < publishAttemptTimeout+time.Second {
		panic("natsqueue: WithDuplicateWindow: " + d.String() + " is under 3s")
	}
	return func(o *options) { o.set |= optDuplicates; o.duplicates = d }
}

// WithCodec sets how messages are encoded (for Open; default JSON). It
// panics if c is nil.
func WithCodec(c Codec) Option {
	if c == nil {
		panic("natsqueue: WithCodec: nil Codec")
	}
	return func(o *options) { o.set |= optCodec; o.codec = c }
}

// WithDepthTTL sets how long Len and Busy reuse the depths last read from
// the server before one of them starts a new read (for Open; default
// DefaultDepthTTL, 100 ms). It panics if d is not positive.
func WithDepthTTL(d time.Duration) Option {
	if d <= 0 {
		panic("natsqueue: WithDepthTTL: " + d.String() + " is not positive")
	}
	return func(o *options) { o.set |= optDepthTTL; o.depthTTL = d }
}

// WithBackoff sets the delay before a failed job is delivered again, given
// the number of its delivery that failed, 1 for the first (for Serve;
// default DefaultBackoff). If delay panics, the panic is logged and
// DefaultBackoff's delay used. It panics if delay is nil.
func WithBackoff(delay func(attempt int) time.Duration) Option {
	if delay == nil {
		panic("natsqueue: WithBackoff: nil function")
	}
	return func(o *options) { o.set |= optBackoff; o.backoff = delay }
}

// WithMaxDeliveries sets how many times a job is delivered at most (for
// Serve; default DefaultMaxDeliveries, 5): a job whose n-th delivery fails
// is a dead letter, and so is one delivered more than n times (its process
// died while it ran). It panics if n is less than 1.
func WithMaxDeliveries(n int) Option {
	if n < 1 {
		panic("natsqueue: WithMaxDeliveries: " + strconv.Itoa(n) + " is less than 1")
	}
	return func(o *options) { o.set |= optMaxDeliveries; o.maxDeliveries = n }
}

// WithDeadLetters sets the sink of the jobs that end without success (for
// Serve; by default they are logged with slog at Warn level). Message is
// the decoded job (or its raw []byte when it could not be decoded), Target
// the queue's name, Reason why: the error of Permanent, ErrUndecodable or
// ErrTooManyDeliveries, wrapping the handler's last error. The sink is
// called from Serve's workers, before the job is removed from the stream
// (which happens even if the sink panics: the panic is logged); it must be
// safe for concurrent use. It panics if sink is nil.
func WithDeadLetters(sink func(crew.DeadLetter)) Option {
	if sink == nil {
		panic("natsqueue: WithDeadLetters: nil sink")
	}
	return func(o *options) { o.set |= optDeadLetters; o.deadLetters = sink }
}

// WithPrefetch sets how many jobs Serve holds beyond those its workers run
// (for Serve; default one per worker). More hides the server's round trip
// on short jobs; fewer keeps a slow process from taking jobs a faster one
// would run sooner. It panics if n is negative.
func WithPrefetch(n int) Option {
	if n < 0 {
		panic("natsqueue: WithPrefetch: " + strconv.Itoa(n) + " is negative")
	}
	return func(o *options) { o.set |= optPrefetch; o.prefetch = n }
}

func logDeadLetter(d crew.DeadLetter) {
	slog.Warn("natsqueue: dead letter", "queue", d.Target, "reason", d.Reason, "message", d.Message)
}
