package main

import (
	"context"
	"fmt"
	"iter"
	"sync"

	concstream "github.com/sourcegraph/conc/stream"

	"github.com/crewlib/crew"
)

// The ordered scenario: read records, process them in parallel, and
// consume the results in input order, each as soon as it and every result
// before it are done. crew's MapSeq and Stream at windows of 1, 4 and 16
// times the workers, against conc's stream, a hand-written ordered
// pipeline at the same windows, and crew's unordered pool.

// The forms of ordered stream compared.
const (
	orderedMapSeqName    = "crew MapSeq"
	orderedStreamName    = "crew Stream"
	orderedConcName      = "conc stream"
	orderedHandName      = "hand-written ordered pipeline"
	orderedUnorderedName = "crew unordered pool"
)

// orderedWindowsPerWorker are the windows of crew's forms and of the
// hand-written pipeline, per worker: one input per worker, crew's default,
// and room for a long job's worth of short ones.
var orderedWindowsPerWorker = []int{1, crew.DefaultWindowPerWorker, 16}

// An orderedRun runs f on inputs 0 to n-1 and passes each result to
// consume, in input order, one call at a time.
type orderedRun[R any] func(n int, f func(context.Context, int) R, consume func(R))

// An orderedContender is one form of ordered stream at one window.
type orderedContender[R any] struct {
	form   string
	window int // inputs taken past the oldest result not consumed; 0 for the unordered pool, which has none
	run    orderedRun[R]
}

// orderedContenders returns the contenders with workers workers, in
// report order: crew's MapSeq, crew's Stream and the hand-written pipeline
// at each window, conc's stream, whose window is fixed at workers+1, and,
// if unordered, crew's unordered pool.
func orderedContenders[R any](workers int, unordered bool) []orderedContender[R] {
	var cs []orderedContender[R]
	for _, form := range []struct {
		name string
		run  func(workers, window int) orderedRun[R]
	}{
		{orderedMapSeqName, mapSeqOrdered[R]},
		{orderedStreamName, streamOrdered[R]},
		{orderedHandName, handOrdered[R]},
	} {
		for _, k := range orderedWindowsPerWorker {
			cs = append(cs, orderedContender[R]{form.name, k * workers, form.run(workers, k*workers)})
		}
	}
	cs = append(cs, orderedContender[R]{orderedConcName, workers + 1, concOrdered[R](workers)})
	if unordered {
		cs = append(cs, orderedContender[R]{orderedUnorderedName, 0, unorderedPool[R](workers)})
	}
	return cs
}

// upTo yields 0 to n-1.
func upTo(n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
		}
	}
}

// mapSeqOrdered ranges over crew.MapSeq's results: one function for every
// input, nothing made per input.
func mapSeqOrdered[R any](workers, window int) orderedRun[R] {
	return func(n int, f func(context.Context, int) R, consume func(R)) {
		g := func(ctx context.Context, i int) (R, error) { return f(ctx, i), nil }
		for r, err := range crew.MapSeq(context.Background(), workers, upTo(n), g, crew.WithWindow(window)) {
			if err != nil {
				panic(err) // cannot happen: f never fails and the context never ends
			}
			consume(r)
		}
	}
}

// streamOrdered submits a task per input to a crew.Stream, as users write
// it: a closure per input, returning a closure per result that consumes it.
func streamOrdered[R any](workers, window int) orderedRun[R] {
	return func(n int, f func(context.Context, int) R, consume func(R)) {
		ctx := context.Background()
		s := crew.NewStream(ctx, workers, crew.WithWindow(window))
		for i := range n {
			if err := s.Submit(ctx, func(ctx context.Context) (func() error, error) {
				r := f(ctx, i)
				return func() error {
					consume(r)
					return nil
				}, nil
			}); err != nil {
				panic(err)
			}
		}
		if err := s.Wait(); err != nil {
			panic(err)
		}
	}
}

// concOrdered submits a task per input to conc's stream, as its docs do.
// Its window is fixed: Go blocks while workers+1 callbacks wait their turn.
func concOrdered[R any](workers int) orderedRun[R] {
	return func(n int, f func(context.Context, int) R, consume func(R)) {
		ctx := context.Background()
		s := concstream.New().WithMaxGoroutines(workers)
		for i := range n {
			s.Go(func() concstream.Callback {
				r := f(ctx, i)
				return func() { consume(r) }
			})
		}
		s.Wait()
	}
}

// unorderedPool runs a job per input on crew's pool, each writing its
// result into a slice, and consumes the slice once the pool's Wait
// returns: the reference for what keeping the order costs.
func unorderedPool[R any](workers int) orderedRun[R] {
	return func(n int, f func(context.Context, int) R, consume func(R)) {
		ctx := context.Background()
		out := make([]R, n)
		p := crew.NewGroup(workers)
		for i := range n {
			if err := p.Submit(ctx, func(ctx context.Context) error {
				out[i] = f(ctx, i)
				return nil
			}); err != nil {
				panic(err)
			}
		}
		if err := p.Wait(); err != nil {
			panic(err)
		}
		for _, r := range out {
			consume(r)
		}
	}
}

// handOrdered is the ordered pipeline Go programmers write by hand. A
// producer goroutine sends the inputs' indexes to workers goroutines over
// a channel, taking a token from a semaphore of window tokens for each;
// the workers send each index and its result to the consumer, the
// caller's goroutine, which puts the result in a ring of window slots at
// index mod window and consumes the ring in order as it fills, giving a
// token back for each result consumed. The semaphore keeps the indexes
// taken within window of the oldest result not consumed, so the slot of
// an index is free when the index is taken, and the results channel,
// which holds window results, never blocks a worker. It allocates per
// run, not per input; every goroutine has ended when it returns.
func handOrdered[R any](workers, window int) orderedRun[R] {
	type result struct {
		i int
		r R
	}
	type slot struct {
		r     R
		ready bool
	}
	return func(n int, f func(context.Context, int) R, consume func(R)) {
		ctx := context.Background()
		tokens := make(chan struct{}, window)
		indexes := make(chan int, workers)
		results := make(chan result, window)
		ring := make([]slot, window)
		var wg sync.WaitGroup
		// The producer owns indexes and closes it once it has sent every
		// index; the workers end once it is closed and drained.
		wg.Go(func() {
			defer close(indexes)
			for i := range n {
				tokens <- struct{}{}
				indexes <- i
			}
		})
		for range workers {
			wg.Go(func() {
				for i := range indexes {
					results <- result{i, f(ctx, i)}
				}
			})
		}
		for next := 0; next < n; {
			x := <-results
			ring[x.i%window] = slot{x.r, true}
			for next < n && ring[next%window].ready {
				s := &ring[next%window]
				consume(s.r)
				*s = slot{} // the ring holds nothing for the collector once a result is out
				next++
				<-tokens
			}
		}
		wg.Wait()
	}
}

// orderedName names a contender in the report: its form and window, as a
// count and as a multiple of workers.
func orderedName(form string, window, workers int) string {
	switch {
	case window == 0:
		return form
	case window%workers == 0:
		return fmt.Sprintf("%s, window %d (%dx)", form, window, window/workers)
	default:
		return fmt.Sprintf("%s, window %d", form, window)
	}
}
