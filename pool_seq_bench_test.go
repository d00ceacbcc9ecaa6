package crew_test

import (
	"context"
	"iter"
	"sync/atomic"
	"testing"

	"github.com/crewlib/crew"
)

// upTo returns the inputs 0 to n-1.
func upTo(n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
		}
	}
}

// same is a stream's job that does nothing but return its input.
func same(_ context.Context, i int) (int, error) { return i, nil }

// BenchmarkMapSeq streams b.N no-op inputs through 8 workers: the cost per
// item of the ordered stream itself.
func BenchmarkMapSeq(b *testing.B) {
	b.ReportAllocs()
	checkSum(b, crew.MapSeq(context.Background(), 8, upTo(b.N), same))
}

// BenchmarkMapSeqBatch is BenchmarkMapSeq as a batch of a shared pool.
func BenchmarkMapSeqBatch(b *testing.B) {
	b.ReportAllocs()
	p := crew.NewGroup(8)
	defer p.Wait()
	checkSum(b, crew.MapSeqBatch(context.Background(), p, upTo(b.N), same))
}

// checkSum ranges over the results of same on upTo(b.N), and checks them.
func checkSum(b *testing.B, seq iter.Seq2[int, error]) {
	sum, i := 0, 0
	for r, err := range seq {
		if err != nil || r != i {
			b.Fatalf("result %d: %d, %v", i, r, err)
		}
		sum += r
		i++
	}
	if i != b.N {
		b.Fatalf("%d results, want %d", i, b.N)
	}
}

// BenchmarkStream submits b.N no-op tasks to a Stream of 8 workers, each
// with a no-op callback: the cost per task of the stream itself (the
// task and callback are made once, as they would be the user's).
func BenchmarkStream(b *testing.B) {
	b.ReportAllocs()
	ctx := context.Background()
	s := crew.NewStream(ctx, 8)
	var ran atomic.Int64
	callback := func() error { ran.Add(1); return nil }
	task := func(context.Context) (func() error, error) { return callback, nil }
	for range b.N {
		if err := s.Submit(ctx, task); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Wait(); err != nil {
		b.Fatal(err)
	}
	if ran.Load() != int64(b.N) {
		b.Fatalf("%d callbacks ran, want %d", ran.Load(), b.N)
	}
}
