// Package natsqueue is a durable work queue on NATS JetStream whose jobs
// are run by crew pools in as many processes as you start.
//
// Open creates (or binds to) a queue: a work-queue stream and one durable
// pull consumer shared by every process. Tell adds a job and returns once
// the server has stored it. Serve runs jobs with a crew.Pool until its
// context ends:
//
//	q, err := natsqueue.Open[Resize](ctx, js, "thumbnails")
//	...
//	err = q.Tell(ctx, Resize{ID: 42})        // any process
//	...
//	err = natsqueue.Serve(ctx, q, 8, resize)   // any number of processes
//
// # Guarantees
//
// Every job told is run at least once, and exactly once per successful
// handler run while no process dies and no acknowledgement is lost.
// Otherwise at least once, dead letters included: a server that dies before
// an acknowledgement reaches it delivers the job again, and after a server
// is killed a job's delivery count, which WithMaxDeliveries limits, can go
// back. On a JetStream cluster, WithReplicas(3) keeps every job through the
// loss of any one server; jobs that were on their way to a process through
// the lost server, or from the consumer's lost leader, run after AckWait. A
// job is acknowledged after its handler returns nil. An error or a panic is
// retried after a backoff; Permanent(err), an undecodable message, or a
// failure on the last allowed delivery ends the job as a dead letter. A
// process that dies holds its jobs for AckWait, after which they run
// elsewhere; a job Serve holds, waiting or running, is kept from
// redelivery. On the end of its context, Serve stops pulling, runs and
// acknowledges the jobs it took, and returns once the server has received
// the acknowledgements; the server applies them to the consumer a moment
// later. Tell retries a publish whose acknowledgement was lost with the
// same message ID, within the stream's duplicate window, so the server
// stores the job once.
//
// # Defaults
//
// Options go to Open (WithAckWait, WithCodec, WithDepthTTL, WithReplicas)
// or to Serve (WithBackoff, WithMaxDeliveries, WithDeadLetters,
// WithPrefetch, WithMetrics); one given to the other panics. AckWait is 30 s, a job is delivered at most 5 times,
// the backoff is 100 ms doubled per failed delivery up to 10 s, the codec
// is JSON, the depth TTL 100 ms, Serve holds one job per worker beyond
// those running, and dead letters are logged with slog.
//
// # Metrics
//
// WithMetrics(m) makes Serve report, as it happens, each delivery and
// redelivery it takes, each ack, nak and dead letter it sends, and each
// job's time from Tell to ack, its handler's run time and its nak's delay,
// to m: a Metrics, natsqueue's own interface, shaped as crew.Metrics is
// (Track returns a Recorder; Add counts an Event, Observe records a
// Timing), so that natsqueue depends on no metrics library. The Recorder
// is called on Serve's workers, under no lock: it must be quick and safe
// for concurrent use. Counts are exact once Serve returns. The README
// shows a Prometheus adapter in a few lines.
//
// # Depths
//
// Len and Busy make a *Queue a crew.Routee (and Tell a crew.Teller), so
// crew.NewPicker(crew.SmallestOfTwo(), queues...) routes among queues by
// depth. The depths are approximate, unlike a crew mailbox's exact Len:
// they are the server's counts, read at most once per depth TTL in a
// short-lived goroutine that no reader waits for, and refreshed from the
// pending count each delivered message carries. A read costs a few tens of
// nanoseconds and no allocation.
//
// The package natstest starts an embedded server for tests.
package natsqueue
