package crew_test

import (
	"context"
	"testing"

	"github.com/crewlib/crew"
)

func nopHandler(context.Context, int) error { return nil }

// BenchmarkBatchSubmit sends b.N no-op jobs through 8 workers, with the
// pool's Submit and with one batch's: the cost of a batch's bookkeeping per
// job, and with one batch of a pool WithFairShare: the cost of fair
// sharing per job. ns/op is the cost of one job, the final Wait included.
func BenchmarkBatchSubmit(b *testing.B) {
	ctx := context.Background()
	b.Run("pool", func(b *testing.B) {
		b.ReportAllocs()
		p := crew.NewPool(benchWorkers, nopHandler)
		for i := range b.N {
			if err := p.Submit(ctx, i); err != nil {
				b.Fatal(err)
			}
		}
		if err := p.Wait(); err != nil {
			b.Fatal(err)
		}
	})
	for _, s := range []struct {
		name string
		opts []crew.Option
	}{
		{"batch", nil},
		{"fair-batch", []crew.Option{crew.WithFairShare()}},
	} {
		b.Run(s.name, func(b *testing.B) { benchBatch(b, crew.NewPool(benchWorkers, nopHandler, s.opts...)) })
	}
}

// benchBatch sends b.N no-op jobs through one batch of p.
func benchBatch(b *testing.B, p *crew.Pool[int]) {
	ctx := context.Background()
	b.ReportAllocs()
	batch, _ := p.NewBatch(ctx)
	for i := range b.N {
		if err := batch.Submit(ctx, i); err != nil {
			b.Fatal(err)
		}
	}
	if err := batch.Wait(); err != nil {
		b.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkNewBatchWait makes and waits for an empty batch per op: the
// fixed cost of a batch, one per request say.
func BenchmarkNewBatchWait(b *testing.B) {
	b.ReportAllocs()
	ctx := context.Background()
	p := crew.NewPool(benchWorkers, nopHandler)
	for range b.N {
		batch, _ := p.NewBatch(ctx)
		if err := batch.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	if err := p.Wait(); err != nil {
		b.Fatal(err)
	}
}
