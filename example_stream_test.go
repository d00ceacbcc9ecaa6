package crew_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/crewlib/crew"
)

// MapSeq hashes the lines of a file (here a string) on 4 workers and
// prints a manifest in the lines' order, each line as soon as its hash and
// every one before it are ready. It reads the lines as it goes: at most
// the window (16 here, 4 per worker) are read ahead of the last line
// printed, however long the file.
func ExampleMapSeq() {
	file := "alpha\nbeta\ngamma\ndelta\n"
	hashes := crew.MapSeq(context.Background(), 4, strings.Lines(file),
		func(_ context.Context, line string) (string, error) {
			line = strings.TrimSuffix(line, "\n")
			sum := sha256.Sum256([]byte(line))
			return fmt.Sprintf("%x  %s", sum[:8], line), nil
		})
	for h, err := range hashes {
		if err != nil {
			fmt.Println("error:", err)
			break
		}
		fmt.Println(h)
	}
	// Output:
	// 8ed3f6ad685b959e  alpha
	// f44e64e75f3948e9  beta
	// be9d587defa1f0c0  gamma
	// 4f4a9410ffcdf895  delta
}

// The first error ends a MapSeq: the results before it, in input order,
// are still yielded, then the error in its input's place. Breaking out of
// the loop would end it as well, canceling the calls in progress.
func ExampleMapSeq_error() {
	parse := func(_ context.Context, s string) (int, error) { return strconv.Atoi(s) }
	for n, err := range crew.MapSeq(context.Background(), 2, slices.Values([]string{"1", "2", "x", "4"}), parse) {
		if err != nil {
			fmt.Println("error:", err)
			break
		}
		fmt.Println(n)
	}
	// Output:
	// 1
	// 2
	// error: strconv.Atoi: parsing "x": invalid syntax
}

// MapSeqBatch streams one request's results from a long-lived pool that
// every request shares, as one batch: its first error would cancel this
// request's work only.
func ExampleMapSeqBatch() {
	p := crew.NewGroup(8)
	defer p.Wait()
	square := func(_ context.Context, n int) (int, error) { return n * n, nil }
	for sq, err := range crew.MapSeqBatch(context.Background(), p, slices.Values([]int{1, 2, 3, 4}), square, crew.WithLimit(2)) {
		fmt.Println(sq, err)
	}
	// Output:
	// 1 <nil>
	// 4 <nil>
	// 9 <nil>
	// 16 <nil>
}

// A Stream suits code that submits its tasks one at a time, as conc's
// stream does: each task runs on a worker and returns a callback, and the
// callbacks run one at a time in submission order, so they may write to
// one writer without a lock. Submit blocks while the window is full.
func ExampleNewStream() {
	ctx := context.Background()
	s := crew.NewStream(ctx, 4)
	for _, word := range []string{"pool", "stream", "actor", "router"} {
		err := s.Submit(ctx, func(context.Context) (func() error, error) {
			upper := strings.ToUpper(word) // runs on a worker
			return func() error {          // runs in submission order
				_, err := fmt.Fprintln(os.Stdout, word, "->", upper)
				return err
			}, nil
		})
		if err != nil {
			break // the stream failed: Wait says why
		}
	}
	if err := s.Wait(); err != nil {
		fmt.Println("error:", err)
	}
	// Output:
	// pool -> POOL
	// stream -> STREAM
	// actor -> ACTOR
	// router -> ROUTER
}

// A Stream's first error, in a task or in a callback, stops it: the
// callbacks of the tasks before the one that failed still run, in order,
// and none after; Submit refuses new tasks with the error, and Wait
// returns it.
func ExampleStream_Wait() {
	ctx := context.Background()
	s := crew.NewStream(ctx, 2)
	errBad := errors.New("bad record")
	for _, rec := range []string{"a", "b", "!", "d"} {
		err := s.Submit(ctx, func(context.Context) (func() error, error) {
			if rec == "!" {
				return nil, errBad
			}
			return func() error { fmt.Println("wrote", rec); return nil }, nil
		})
		if err != nil {
			break
		}
	}
	fmt.Println("error:", s.Wait())
	// Output:
	// wrote a
	// wrote b
	// error: bad record
}
