package crew_test

import (
	"context"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/crewlib/crew"
)

// serverJobs is the jobs of one request in BenchmarkServer.
const serverJobs = 16

// BenchmarkServer serves requests of 16 no-op jobs one after another, as a
// handler does: errgroup.WithContext with SetLimit(8) per request, against
// a batch per request on one long-lived pool of 8 workers, plain, with a
// no-op Recorder (WithMetrics), and configured as examples/server is
// (WithFairShare, WithMetrics, a tenant per request). ns/op is the cost of
// one job, its request's set-up and Wait included.
func BenchmarkServer(b *testing.B) {
	ctx := context.Background()
	b.Run("errgroup", func(b *testing.B) {
		b.ReportAllocs()
		for n := b.N; n > 0; n -= serverJobs {
			g, gctx := errgroup.WithContext(ctx)
			g.SetLimit(benchWorkers)
			for range min(n, serverJobs) {
				g.Go(func() error { return noop(gctx) })
			}
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	})
	tenants := [...]string{"a", "b", "c", "d"}
	for _, s := range []struct {
		name   string
		opts   []crew.Option
		tenant bool
	}{
		{"batch", nil, false},
		{"batch-metrics", []crew.Option{crew.WithMetrics(nopMetrics{})}, false},
		{"batch-fair-metrics-tenant", []crew.Option{crew.WithFairShare(), crew.WithMetrics(nopMetrics{})}, true},
	} {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			p := crew.NewGroup(benchWorkers, s.opts...)
			b.ResetTimer()
			for r, n := 0, b.N; n > 0; r, n = r+1, n-serverJobs {
				var opts []crew.Option
				if s.tenant {
					opts = []crew.Option{crew.WithTenant(tenants[r%len(tenants)])}
				}
				batch, _ := p.NewBatch(ctx, opts...)
				for range min(n, serverJobs) {
					if err := batch.Submit(ctx, noop); err != nil {
						b.Fatal(err)
					}
				}
				if err := batch.Wait(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if err := p.Wait(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkEmptyBatch makes and waits for an empty batch per op, beside
// errgroup.WithContext and its Wait: the fixed cost of a request's batch.
func BenchmarkEmptyBatch(b *testing.B) {
	ctx := context.Background()
	b.Run("errgroup", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			g, _ := errgroup.WithContext(ctx)
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("batch", func(b *testing.B) {
		b.ReportAllocs()
		p := crew.NewPool(benchWorkers, nopHandler)
		for range b.N {
			batch, _ := p.NewBatch(ctx)
			if err := batch.Wait(); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		if err := p.Wait(); err != nil {
			b.Fatal(err)
		}
	})
}
