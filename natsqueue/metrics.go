package natsqueue

import (
	"strconv"
	"time"
)

// Metrics is where Serve, given WithMetrics(m), reports how it settles a
// queue's jobs, as it happens: a small interface of natsqueue's own, so
// that natsqueue depends on no metrics library, shaped as crew.Metrics is
// (Track returns a Recorder that counts events and observes durations) so
// that an adapter for one is a few lines away from the other's. It is not
// crew.Metrics itself: crew's events (submitted, completed, skipped...) are
// a pool's, while a queue's are deliveries, acknowledgements and naks.
// Events and timings are values (Event, Timing) rather than one method
// each, so that an adapter is one counter and one histogram labelled by
// their names (see the README for Prometheus), and so that a new event
// breaks no implementation.
//
// Each Serve given WithMetrics(m) calls m.Track once, before it pulls a
// job, and reports to the Recorder that Track returns until it calls the
// Recorder's Close, as it returns. Serves of the same queue (in one
// process, or one after another) give the same Source: a Metrics should
// add their counts up.
type Metrics interface {
	// Track is called once by each Serve given WithMetrics, and returns
	// the Recorder it reports to; nil, to report nothing.
	Track(s Source) Recorder
}

// A Source is the queue a Serve reports on.
type Source struct {
	Queue string // the queue's name, as given to Open
}

// A Recorder receives the events of one Serve. Its methods are called
// from Serve's workers, many at once, as each settles a job: they must be
// safe for concurrent use and quick, and must not block or panic. Serve
// calls none of them while it holds a lock, nor on the goroutine that
// pulls jobs, so a slow Recorder slows only the worker that calls it (and
// holds that worker's job until it returns).
//
// Every event is reported before Serve returns, so counts read after it
// are exact. Once Serve has returned nil, each job it took counts once as
// a delivery or a redelivery and once as an ack, a nak or a dead letter:
// Delivery + Redelivery = Ack + Nak + DeadLetter. An acknowledgement that
// could not be sent counts as none of the three (Serve's error says how
// many), nor does a job whose handler called runtime.Goexit: both jobs
// come again after AckWait.
type Recorder interface {
	// Add counts n (at least 1) more events of kind e.
	Add(e Event, n int)

	// Observe records one duration of kind t.
	Observe(t Timing, d time.Duration)

	// Close says that Serve is returning: no call follows.
	Close()
}

// An Event is what a Recorder counts (see Recorder.Add).
type Event uint8

// The events. A job counts as a delivery or a redelivery as a worker
// takes it, by the server's count of its deliveries (NumDelivered in the
// message's metadata), before it is decoded; it then counts as an ack, a
// nak or a dead letter once that acknowledgement is sent.
const (
	EventDelivery   Event = iota + 1 // a job's first delivery (attempt 1), or a message without JetStream metadata
	EventRedelivery                  // a later delivery (attempt > 1): after a nak, or after AckWait when the process holding it died or its ack was lost
	EventAck                         // the handler returned nil: the job is done and removed
	EventNak                         // the handler failed (an error or a panic) and the job will be delivered again after the backoff (see NakDelay)
	EventDeadLetter                  // the job went to the dead-letter sink and was removed: Permanent, undecodable, failed on its last allowed delivery, or delivered more times than allowed
)

// String returns the event's name: "delivery", "redelivery", "ack", "nak"
// or "dead_letter".
func (e Event) String() string {
	if e >= EventDelivery && e <= EventDeadLetter {
		return eventNames[e-EventDelivery]
	}
	return "Event(" + strconv.Itoa(int(e)) + ")"
}

var eventNames = [...]string{"delivery", "redelivery", "ack", "nak", "dead_letter"}

// A Timing is what kind of duration a Recorder observes.
type Timing uint8

const (
	// TellToAck is how long an acked job took from its Tell (when the
	// stream stored it: the timestamp in the message's metadata) to its
	// ack, retries and waits in the queue included: one observation per
	// ack. The stream's time is the server's clock and the ack's this
	// process's, so a skew between the two machines shifts it; a negative
	// difference (the server's clock ahead) is observed as 0.
	TellToAck Timing = iota + 1
	// RunTime is how long the handler ran, failed, panicked or not: one
	// observation per handler call. A job dead-lettered without running
	// (undecodable, or delivered too often) has none.
	RunTime
	// NakDelay is the backoff (WithBackoff) a nak asked the server to
	// wait before it delivers the job again: one observation per nak.
	NakDelay
)

// String returns "tell_to_ack", "run_time" or "nak_delay".
func (t Timing) String() string {
	switch t {
	case TellToAck:
		return "tell_to_ack"
	case RunTime:
		return "run_time"
	case NakDelay:
		return "nak_delay"
	}
	return "Timing(" + strconv.Itoa(int(t)) + ")"
}

// WithMetrics reports how Serve settles the queue's jobs to m, as it
// happens (for Serve): see Metrics for how, and Event and Timing for what.
// Tells are not counted; the queue's depth is Queue.Len. Without it,
// nothing is measured. With it, a worker reads the clock three times per
// job and makes about four calls to the Recorder, which is little beside
// the job's round trips to the server. It panics if m is nil.
func WithMetrics(m Metrics) Option {
	if m == nil {
		panic("natsqueue: WithMetrics: nil Metrics")
	}
	return func(o *options) { o.set |= optMetrics; o.metrics = m }
}
