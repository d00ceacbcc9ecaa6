package crew_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"iter"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/crewlib/crew"
)

// Randomized checks of the ordered streams (MapSeq, MapSeqBatch, NewStream,
// NewStreamBatch): streams of 40 to 120 items (one in six: 600 to 1,200,
// with a window of 257 to 756, made in chunks) on 1 to 6 workers, some
// items sleeping up to 300 µs, with errors, panics and runtime.Goexit in
// tasks and callbacks, cancels and breaks, each drawn from a seed that
// the log prints. Each trial checks that results come in input order, as
// an exact prefix of the items, then at most one error, the right one; that
// the stream never holds more than its window; that callbacks run one at
// a time; and that Wait (or the loop) reports a failure whenever an item
// did not succeed. Every test ends with no goroutine left behind.
//
// CI runs a few hundred trials; before a release, run 5,000 of each, at
// GOMAXPROCS 8, under the race detector:
//
//	GOMAXPROCS=8 go test -race -run Randomized -crew.stream-trials 5000 .
var (
	streamTrials = flag.Int("crew.stream-trials", 0, "trials of each randomized ordered-stream test; 0: 200, or 50 under -race")
	streamSeed   = flag.Uint64("crew.stream-seed", 0, "the seed of the randomized ordered-stream tests; 0 draws one")
)

// What an item of a randomized stream does.
type fate uint8

const (
	succeeds fate = iota
	sleeps        // sleeps up to 300 µs, then succeeds
	fails         // returns an error
	panicks       // panics with an error
	exits         // calls runtime.Goexit
	cancels       // cancels the stream's context (in a Stream, from its callback), then succeeds
	cbFails       // a Stream's task whose callback returns an error
	cbPanics      // a Stream's task whose callback panics
	cbExits       // a Stream's task whose callback calls runtime.Goexit
)

// failsItself reports whether an item of fate f fails in its task (or f).
func (f fate) failsItself() bool { return f == fails || f == panicks || f == exits }

// failsInCallback reports whether a Stream's item of fate f fails in its
// callback.
func (f fate) failsInCallback() bool { return f == cbFails || f == cbPanics || f == cbExits }

// A plan is one randomized trial: its items' fates, and its shape.
type plan struct {
	fates   []fate
	naps    []time.Duration // how long each item of fate sleeps sleeps
	workers int
	n       int  // WithWindow's n, if given
	windows bool // WithWindow is given
	breakAt int  // MapSeq: the loop breaks after this many results; 0: never
	bySelf  bool // a Stream's Submits use the stream's context, not another
}

// errFated is what every item that fails wraps, or panics with.
var errFated = errors.New("fated")

// errCanceled is the cause of a randomized stream's cancel.
var errCanceled = errors.New("canceled by an item")

func newPlan(rng *rand.Rand, stream bool) plan {
	n := 40 + rng.IntN(81)
	long := rng.IntN(6) == 0 // a window made in chunks (see WithWindow), and enough items to cross them
	if long {
		n = 600 + rng.IntN(601)
	}
	pl := plan{fates: make([]fate, n), naps: make([]time.Duration, n), workers: 1 + rng.IntN(6), bySelf: rng.IntN(2) == 0}
	for i := range pl.fates {
		if rng.IntN(4) == 0 {
			pl.fates[i], pl.naps[i] = sleeps, time.Duration(rng.IntN(300))*time.Microsecond
		}
	}
	failures := []fate{fails, panicks, exits}
	if stream {
		failures = append(failures, cbFails, cbPanics, cbExits)
	}
	for range rng.IntN(3) {
		pl.fates[rng.IntN(n)] = failures[rng.IntN(len(failures))]
	}
	if rng.IntN(5) == 0 {
		pl.fates[rng.IntN(n)] = cancels
	}
	switch {
	case long:
		pl.windows, pl.n = true, 257+rng.IntN(500)
	case rng.IntN(2) == 0:
		pl.windows, pl.n = true, 1+rng.IntN(20)
	}
	if !stream && rng.IntN(4) == 0 {
		pl.breakAt = 1 + rng.IntN(n)
	}
	return pl
}

// window returns the stream's options (WithWindow, if the plan gives it)
// and its window.
func (pl plan) window() ([]crew.Option, int) {
	if pl.windows {
		return []crew.Option{crew.WithWindow(pl.n)}, pl.n
	}
	return nil, crew.DefaultWindowPerWorker * pl.workers
}

// checker returns what a trial checks with: check reports a failure,
// prefixed with what the trial was, and keeps ok false from then on.
func checker(t *testing.T, ok *bool, what string, args ...any) func(cond bool, format string, args ...any) bool {
	return func(cond bool, format string, more ...any) bool {
		if !cond {
			t.Errorf(what+": "+format, append(append([]any(nil), args...), more...)...)
			*ok = false
		}
		return cond
	}
}

// failure returns the error an item i of a randomized stream fails with,
// panics with, or exits with (nil: it returns), as its fate says.
func failure(i int, f fate) error {
	switch f {
	case fails, cbFails:
		return fmt.Errorf("item %d: %w", i, errFated)
	case panicks, cbPanics:
		panic(fmt.Errorf("item %d: %w", i, errFated))
	case exits, cbExits:
		runtime.Goexit()
	}
	return nil
}

// isGoexit reports whether err is what a stream reports for an item that
// called runtime.Goexit.
func isGoexit(err error) bool { return errors.Is(err, crew.ErrGoexit) }

// isFated reports whether err is one that a randomized stream's items
// make: their errors, panics, Goexits, or their cancel's cause.
func isFated(err error) bool {
	return errors.Is(err, errFated) || isGoexit(err) || errors.Is(err, errCanceled)
}

// trials runs trial for each round, drawing each from the seed, until
// one fails, then checks that no goroutine was left behind.
func trials(t *testing.T, trial func(*testing.T, *rand.Rand) bool) {
	ignore := goleak.IgnoreCurrent()
	seed := *streamSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	rounds := *streamTrials
	if rounds == 0 {
		rounds = 200
		if raceEnabled {
			rounds = 50
		}
	}
	for round := range rounds {
		if !trial(t, rand.New(rand.NewPCG(seed, uint64(round)))) {
			t.Fatalf("round %d of seed %d (rerun it with -crew.stream-seed %d)", round, seed, seed)
		}
	}
	goleak.VerifyNone(t, ignore)
}

func TestRandomizedStreamsRunTheirCallbacksInOrderAndNeverHideAFailure(t *testing.T) {
	for _, form := range []string{"NewStream", "NewStreamBatch"} {
		t.Run(form, func(t *testing.T) {
			trials(t, func(t *testing.T, rng *rand.Rand) bool { return streamTrial(t, rng, form) })
		})
	}
}

// streamTrial runs one randomized Stream, and reports whether it held.
func streamTrial(t *testing.T, rng *rand.Rand, form string) bool {
	pl := newPlan(rng, true)
	n := len(pl.fates)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	opts, window := pl.window()
	var s *crew.Stream
	var p *crew.Pool[crew.Job]
	if form == "NewStream" {
		s = crew.NewStream(ctx, pl.workers, opts...)
	} else {
		p = crew.NewGroup(pl.workers)
		s = crew.NewStreamBatch(ctx, p, opts...)
	}

	var (
		started, failed = make([]atomic.Bool, n), make([]atomic.Bool, n)
		ran             []int        // the callbacks that ran, in order: written by them, one at a time
		delivered       atomic.Int64 // callbacks that ended, counted before they return
		running         atomic.Int64 // callbacks running
		busy            peak         // tasks running
		beside, over    atomic.Bool  // a callback ran beside another; a task started beyond the window
		canceled        atomic.Bool  // a callback canceled the stream's context
	)
	task := func(i int) crew.StreamTask {
		return func(context.Context) (func() error, error) {
			started[i].Store(true)
			defer busy.enter()()
			if int64(i)-delivered.Load() >= int64(window) {
				over.Store(true)
			}
			f := pl.fates[i]
			if f == sleeps {
				time.Sleep(pl.naps[i])
			}
			if f.failsItself() {
				failed[i].Store(true)
				return nil, failure(i, f)
			}
			return func() error {
				if running.Add(1) != 1 {
					beside.Store(true)
				}
				defer running.Add(-1)
				defer delivered.Add(1)
				ran = append(ran, i)
				if f == cancels {
					canceled.Store(true)
					cancel(errCanceled)
				}
				return failure(i, f)
			}, nil
		}
	}
	accepted := 0
	for i := range n {
		sctx := context.Background()
		if pl.bySelf {
			sctx = ctx
		}
		if s.Submit(sctx, task(i)) != nil {
			break
		}
		accepted++
	}
	err := s.Wait()
	if p != nil {
		if perr := p.Wait(); perr != nil && !isFated(perr) {
			t.Errorf("the shared pool's Wait: %v", perr)
		}
	}

	ok := true
	check := checker(t, &ok, "%s on %d workers, window %d, fates %v", form, pl.workers, window, pl.fates)
	check(!beside.Load(), "a callback ran beside another")
	check(!over.Load(), "a task started beyond the window")
	check(busy.most.Load() <= int64(pl.workers), "%d tasks ran at once", busy.most.Load())
	for j, i := range ran {
		if !check(i == j, "callbacks ran in the order %v", ran) {
			break
		}
	}
	// The callbacks that run are those of the accepted tasks before the
	// first that did not succeed, in submission order, and that one's if
	// it failed in its callback.
	want, lost := accepted, accepted < n
	for i := range accepted {
		if !started[i].Load() || failed[i].Load() {
			want, lost = i, true
			break
		}
		if pl.fates[i].failsInCallback() {
			want, lost = i+1, true
			break
		}
	}
	check(len(ran) == want, "%d callbacks ran of %d tasks accepted, want %d", len(ran), accepted, want)
	switch {
	case lost:
		check(err != nil, "Wait returned nil, and %d of %d tasks did not succeed", n-len(ran), n)
	case !canceled.Load():
		check(err == nil, "Wait: %v, and every task succeeded", err)
	}
	check(err == nil || isFated(err), "Wait: %v", err)
	return ok
}

func TestRandomizedMapSeqYieldsAnExactPrefixThenOneError(t *testing.T) {
	for _, form := range []string{"MapSeq", "MapSeqBatch"} {
		t.Run(form, func(t *testing.T) {
			trials(t, func(t *testing.T, rng *rand.Rand) bool { return seqTrial(t, rng, form) })
		})
	}
}

// seqTrial runs one randomized MapSeq, and reports whether it held.
func seqTrial(t *testing.T, rng *rand.Rand, form string) bool {
	pl := newPlan(rng, false)
	n := len(pl.fates)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	opts, window := pl.window()
	var busy peak
	f := func(_ context.Context, i int) (int, error) {
		defer busy.enter()()
		switch pl.fates[i] {
		case sleeps:
			time.Sleep(pl.naps[i])
		case cancels:
			cancel(errCanceled)
		}
		return 2 * i, failure(i, pl.fates[i])
	}
	var yielded int // results yielded: written by the loop, read by the inputs' iterator on the same goroutine
	over := false
	inputs := func(yield func(int) bool) {
		for i := range n {
			if yielded < i+1-window {
				over = true
			}
			if !yield(i) {
				return
			}
		}
	}
	var seq iter.Seq2[int, error]
	var p *crew.Pool[crew.Job]
	if form == "MapSeq" {
		seq = crew.MapSeq(ctx, pl.workers, inputs, f, opts...)
	} else {
		p = crew.NewGroup(pl.workers)
		seq = crew.MapSeqBatch(ctx, p, inputs, f, opts...)
	}

	ok := true
	check := checker(t, &ok, "%s on %d workers, window %d, break at %d, fates %v", form, pl.workers, window, pl.breakAt, pl.fates)
	var err error
	after := 0 // pairs after the error
	for r, e := range seq {
		switch {
		case err != nil:
			after++
		case e != nil:
			err = e
		default:
			check(r == 2*yielded, "result %d in the place of input %d", r, yielded)
			yielded++
		}
		if pl.breakAt > 0 && yielded == pl.breakAt {
			break
		}
	}
	if p != nil {
		if perr := p.Wait(); perr != nil && !isFated(perr) {
			t.Errorf("the shared pool's Wait: %v", perr)
		}
	}
	check(after == 0, "%d pairs after the error %v", after, err)
	check(!over, "an input was read beyond the window")
	check(busy.most.Load() <= int64(pl.workers), "%d calls ran at once", busy.most.Load())
	if pl.breakAt > 0 && yielded == pl.breakAt {
		return ok // broke out: what came before was checked
	}
	// The results yielded are those of the inputs before the first that
	// did not succeed, then that one's error; before the first that
	// fails, only a cancel can stop an input.
	first, cancelAt := n, n
	for i, f := range pl.fates {
		if f == cancels && cancelAt == n {
			cancelAt = i
		}
		if f.failsItself() {
			first = i
			break
		}
	}
	switch {
	case err == nil:
		check(yielded == n, "%d results, no error, of %d inputs", yielded, n)
		check(first == n, "no error, and input %d failed", first)
	case yielded == first && errors.Is(err, errFated):
		check(strings.HasPrefix(err.Error(), fmt.Sprintf("item %d:", first)) || strings.Contains(err.Error(), fmt.Sprintf("panicked: item %d:", first)),
			"the error in the place of input %d: %v", first, err)
	case yielded == first && isGoexit(err):
		check(pl.fates[first] == exits, "a Goexit in the place of input %d, of fate %d", first, pl.fates[first])
	default:
		check(cancelAt < first && yielded > cancelAt && yielded <= first && errors.Is(err, errCanceled),
			"%d results, then %v (first failure %d, cancel at %d)", yielded, err, first, cancelAt)
	}
	return ok
}
