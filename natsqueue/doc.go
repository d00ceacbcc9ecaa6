// Package natsqueue is a durable work queue on NATS JetStream whose jobs
// are run by crew pools in as many processes as you start.
//
// Open creates (or binds to) a queue: a work-queue stream and one durable
// pull consumer shared by every process, and the queue's dead-letter
// stream. Tell adds a job and returns once the server has stored it;
// TellWith adds one to run later (RunAt, RunAfter) or once per key
// (UniqueKey). Serve runs jobs with a crew.Pool until its context ends:
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
// loss of any one server. A pull lost with the server Serve's connection
// is on, or with the consumer's leader, is found within two of the
// server's heartbeats (200 ms), and Serve pulls again; jobs that were on
// their way to the process through that server, or from that leader, run
// after AckWait. A job is acknowledged after its handler returns nil. An
// error or a panic is retried after a backoff; Permanent(err), an
// undecodable message, or a failure on the last allowed delivery ends the
// job as a dead letter. A process that dies holds its jobs for AckWait,
// after which they run elsewhere; a job Serve holds, waiting or running,
// is kept from redelivery. On the end of its context, Serve stops
// pulling, runs and acknowledges the jobs it took, and returns once the
// server has received the acknowledgements; the server applies them to
// the consumer a moment later. Tell retries a publish whose
// acknowledgement was lost with the same message ID, within the stream's
// duplicate window, so the server stores the job once.
//
// # Dead letters
//
// A job that ends as a dead letter is kept in the stream "DEAD_<name>",
// with its reason, error, attempts and message. q.DeadLetters(), or
// OpenDeadLetters in a tool, lists them (Count, Get, All), tells them
// again as new jobs (Replay, ReplayAll) and deletes them (Purge,
// PurgeAll); the command natsqueue/cmd/deadletters does so from a shell.
// Serve stores the dead letter and waits for the stream's
// acknowledgement, then calls the WithDeadLetters sink, then Terms the
// job. If the store fails, the job is Nak'ed with the backoff and comes
// again (its handler may run again), so no dead letter is lost between
// giving up and writing it. A
// process that dies between the store and the Term has the job come
// again; its second dead letter, of the same message ID "dead:<seq>:<id>"
// (the job's sequence in the queue's stream and its ID), is stored once
// if it comes within the dead-letter stream's duplicate window.
//
// # Delayed and unique jobs
//
// RunAt and RunAfter make a job run no earlier than its time, and at
// least once. On nats-server 2.12 and later the server holds the
// schedule and adds the job at its time. On a stream that does not allow
// schedules (an older server, a stream made beforehand), Serve defers the
// job until its time: the deferral uses none of its deliveries
// (WithMaxDeliveries) but counts against the consumer's MaxAckPending.
// UniqueKey(key) stores a job once per key within the stream's duplicate
// window (WithDuplicateWindow); TellWith returns ErrDuplicate for another.
//
// # Existing streams
//
// Open binds to an existing queue stream whatever its duplicate window,
// unless WithDuplicateWindow gives another, which it refuses with
// ErrIncompatible; a stream without schedules is used, its delayed jobs
// deferred by Serve. Open creates the dead-letter stream if it is
// missing, and refuses one with ErrIncompatible if it has another
// retention than Limits, takes a subject other than "natsqueue.<name>.dead", keeps
// its messages in memory, or has other replicas than WithReplicas gives.
//
// # Defaults
//
// Options go to Open (WithAckWait, WithCodec, WithDepthTTL, WithReplicas,
// WithDuplicateWindow) or to Serve (WithBackoff, WithMaxDeliveries,
// WithDeadLetters, WithPrefetch, WithMetrics); one given to the other
// panics. AckWait is 30 s, a job is delivered at most 5 times, the
// backoff is 100 ms doubled per failed delivery up to 10 s, the codec is
// JSON, the depth TTL 100 ms, the duplicate window the server's (2
// minutes), Serve holds one job per worker beyond those running, and dead
// letters are stored, then logged with slog.
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
