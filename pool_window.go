package crew

import (
	"context"
	"strconv"
)

// The window of an ordered stream, and what else MapSeq's and a Stream's
// forms share: their options, and the dead-letter sinks of their batches.

// DefaultWindowPerWorker is how many inputs (MapSeq, MapSeqBatch) or tasks
// (a Stream) per worker an ordered stream holds whose results it has not
// delivered yet, unless WithWindow sets its window.
const DefaultWindowPerWorker = 4

// WithWindow sets an ordered stream's window (MapSeq, MapSeqBatch,
// NewStream, NewStreamBatch) to n: the stream holds at most n inputs, or
// tasks, whose results it has not delivered yet, the oldest included. A
// slow input therefore holds back at most n inputs' worth of results and
// memory, and the workers idle once n inputs are done or running behind
// it. A larger window lets more quick inputs run behind a slow one; 1 runs
// the inputs one at a time. A Stream's Submit that found the window full
// waits until a quarter of it is free (see Stream.Submit). By default the
// window is DefaultWindowPerWorker times the workers (for a stream on a
// batch made WithLimit, times its limit if that is fewer). It panics if n
// is less than 1. It is not WithFairWindow, a fair pool's setting.
//
// The window is a bound, not an allocation: a stream makes its places
// as it first needs them, in runs of up to 256, and a run its head has
// left serves its tail again, so a stream holds memory for the inputs it
// holds (and a run spare), however large n is. A window of up to 256 is
// made whole as the stream starts.
func WithWindow(n int) Option {
	if n < 1 {
		panic("crew: WithWindow: n must be at least 1, got " + strconv.Itoa(n))
	}
	return func(o *options) { o.set |= optWindow; o.window = n }
}

// The options an ordered stream takes: those of its own pool, for MapSeq
// and NewStream, or of its batch, for MapSeqBatch and NewStreamBatch,
// which do not take a dead-letter sink (the stream reports, in order,
// where it stopped), nor WithAllErrors (it stops at its first error).
const (
	streamPoolOpts  = optName | optStrategy | optErrorHandler | optNoRecovery | optMetrics | optWindow
	streamBatchOpts = optLimit | optTenant | optWeight | optWindow
)

// windowOf is an ordered stream's window, given its options and its
// pool's workers.
func windowOf(o *options, workers int) int {
	switch {
	case o.set&optWindow != 0:
		return o.window
	case o.limit > 0:
		workers = min(workers, o.limit) // a batch never runs more jobs at once than its pool has workers
	}
	return DefaultWindowPerWorker * max(workers, 1)
}

// ownPool starts the pool of an ordered stream of its own (MapSeq,
// NewStream), given the stream's options, whose context derives from
// parent: no more workers than the window, and a bound that holds the
// whole window, so that the stream's Submits never wait for room in it.
func ownPool(o options, parent context.Context, workers, window int) *Pool[Job] {
	o.parent, o.cancelOnError, o.deadLetters = parent, true, discard
	o.set |= optQueueSize
	o.queueSize = (window-1)/workers + 1 // window/workers, rounded up, with no overflow
	return newGroup(min(workers, window), &o)
}

// discard is the dead-letter sink of the inputs an ordered stream on a
// pool of its own skipped: the stream reports where it stopped, and a
// loop that breaks out meant to skip the rest.
func discard(DeadLetter) {}

// stopOn returns the dead-letter sink of an ordered stream that is a batch
// of a shared pool: the pool skips the batch's queued jobs when its own
// context ends, without canceling the batch, and the stream would wait for
// them for ever. The sink stops the stream with the reason, which its loop,
// or its Submits, then report.
func stopOn(stop context.CancelCauseFunc) func(DeadLetter) {
	return func(d DeadLetter) { stop(d.Reason) }
}
