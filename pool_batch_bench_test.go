package crew_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/crewlib/crew"
)

func nopHandler(context.Context, int) error { return nil }

// BenchmarkBatchSubmit sends b.N no-op jobs through 8 workers, with the
// pool's Submit and with one batch's: the cost of a batch's bookkeeping per
// job, and with one batch of a pool WithFairShare: the cost of fair
// sharing per job; from one submitter, and from 8 (the -8submitters
// rows). ns/op is the cost of one job, the final Wait included.
func BenchmarkBatchSubmit(b *testing.B) {
	for _, submitters := range []int{1, 8} {
		suffix := ""
		if submitters > 1 {
			suffix = "-" + strconv.Itoa(submitters) + "submitters"
		}
		b.Run("pool"+suffix, func(b *testing.B) {
			p := crew.NewPool(benchWorkers, nopHandler)
			submitAll(b, submitters, p.Submit)
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
			b.Run(s.name+suffix, func(b *testing.B) {
				p := crew.NewPool(benchWorkers, nopHandler, s.opts...)
				batch, _ := p.NewBatch(context.Background())
				submitAll(b, submitters, batch.Submit)
				if err := batch.Wait(); err != nil {
					b.Fatal(err)
				}
				if err := p.Wait(); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// submitAll submits b.N no-op jobs with submit, from submitters
// goroutines.
func submitAll(b *testing.B, submitters int, submit func(context.Context, int) error) {
	b.ReportAllocs()
	ctx := context.Background()
	fanOut(b, submitters, func(n int) {
		for i := range n {
			if err := submit(ctx, i); err != nil {
				b.Error(err)
				return
			}
		}
	})
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

// BenchmarkFairTenants sends b.N no-op jobs through 8 workers from 1, 2 and
// 8 tenants at once, each a goroutine submitting to a batch of its own
// (WithTenant), on a pool first come, first served (fifo rows) and
// WithFairShare (fair rows): what fair sharing costs per job as tenants
// contend. ns/op is the cost of one job, the final Waits included.
func BenchmarkFairTenants(b *testing.B) {
	for _, tenants := range []int{1, 2, 8} {
		for _, s := range []struct {
			name string
			opts []crew.Option
		}{
			{"fifo", nil},
			{"fair", []crew.Option{crew.WithFairShare()}},
		} {
			b.Run(s.name+"-"+strconv.Itoa(tenants)+"tenants", func(b *testing.B) {
				b.ReportAllocs()
				ctx := context.Background()
				p := crew.NewPool(benchWorkers, nopHandler, s.opts...)
				batches := make([]*crew.Batch[int], tenants)
				for i := range batches {
					batches[i], _ = p.NewBatch(ctx, crew.WithTenant("tenant"+strconv.Itoa(i)))
				}
				b.ResetTimer()
				var wg sync.WaitGroup
				for i, batch := range batches {
					n := b.N / tenants
					if i == 0 {
						n += b.N % tenants
					}
					wg.Go(func() {
						for j := range n {
							if err := batch.Submit(ctx, j); err != nil {
								b.Error(err)
								return
							}
						}
						if err := batch.Wait(); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				if err := p.Wait(); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
