package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/crewlib/crew"
)

// The server path: requests of serverJobs no-op jobs, one after another,
// as a handler serves them, each as errgroup.WithContext with SetLimit
// per request, against a batch per request on one long-lived pool, plain,
// with a Recorder that does nothing (WithMetrics), and configured as
// examples/server is (WithFairShare, WithMetrics, a tenant per client).
// What it measures is what a request's fan-out costs a server, its jobs
// aside.
const serverJobs = 16

// serverPathResult is the server path's cost at one GOMAXPROCS, for each
// of serverWays: the median ns per job over the runs, and the most
// allocations per request of any run.
type serverPathResult struct {
	procs  int
	ns     [4]float64
	allocs [4]float64
}

// serverWays are the ways a request is served, in the order
// serverPathResult keeps them.
var serverWays = [4]string{"errgroup per request", "a batch per request", "the same, WithMetrics", "the same, WithFairShare and a tenant per client"}

// measureServerPath measures the server path at each of scalingProcs,
// runs times each, the ways interleaved within each run, with workers
// workers (errgroup's limit, the pool's size).
func measureServerPath(workers, runs int, progress func(string)) []serverPathResult {
	var out []serverPathResult
	for _, procs := range scalingProcs {
		progress(fmt.Sprintf("GOMAXPROCS %d", procs))
		atProcs(procs, func() { out = append(out, serverPathAt(procs, workers, runs)) })
	}
	return out
}

// serverPathAt is measureServerPath at the current GOMAXPROCS.
func serverPathAt(procs, workers, runs int) serverPathResult {
	res := serverPathResult{procs: procs}
	got := interleave(runs, serverWays[:], func(string) {}, each(func(i int) testing.BenchmarkResult {
		return testing.Benchmark(func(b *testing.B) { serveRequests(b, i, workers) })
	}))
	var ns [4][]float64
	for i, rs := range got {
		for _, r := range rs {
			ns[i] = append(ns[i], float64(r.T)/float64(r.N))
			res.allocs[i] = max(res.allocs[i], float64(r.MemAllocs)/float64(r.N)*serverJobs)
		}
	}
	for i := range ns {
		res.ns[i] = median(ns[i])
	}
	return res
}

// serveRequests serves b.N jobs as requests of serverJobs, the way
// serverWays[way] says.
func serveRequests(b *testing.B, way, workers int) {
	ctx := context.Background()
	b.ReportAllocs()
	if way == 0 {
		for n := b.N; n > 0; n -= serverJobs {
			g, gctx := errgroup.WithContext(ctx)
			g.SetLimit(workers)
			for range min(n, serverJobs) {
				g.Go(func() error { return gctx.Err() })
			}
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	var opts []crew.Option
	if way >= 2 {
		opts = append(opts, crew.WithMetrics(nopMetrics{}))
	}
	if way == 3 {
		opts = append(opts, crew.WithFairShare())
	}
	p := crew.NewGroup(workers, opts...)
	defer p.Wait()
	tenants := [...]string{"a", "b", "c", "d"}
	job := func(ctx context.Context) error { return ctx.Err() }
	b.ResetTimer()
	for r, n := 0, b.N; n > 0; r, n = r+1, n-serverJobs {
		var bopts []crew.Option
		if way == 3 {
			bopts = append(bopts, crew.WithTenant(tenants[r%len(tenants)]))
		}
		batch, _ := p.NewBatch(ctx, bopts...)
		for range min(n, serverJobs) {
			if err := batch.Submit(ctx, job); err != nil {
				b.Fatal(err)
			}
		}
		if err := batch.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
}

// nopMetrics is a Metrics whose Recorder does nothing: what WithMetrics
// costs crew itself.
type nopMetrics struct{}

func (nopMetrics) Track(crew.Source) crew.Recorder { return nopRecorder{} }

type nopRecorder struct{}

func (nopRecorder) Add(crew.Event, int)                        {}
func (nopRecorder) Observe(crew.Timing, time.Duration, string) {}
func (nopRecorder) Close()                                     {}

// serverPathTable writes the server path's table, if it was measured.
func (r *batchesScenario) serverPathTable(p printer) {
	if len(r.serverPath) == 0 {
		return
	}
	p("The server path: requests of %d no-op jobs one after another, as a handler serves them: errgroup.WithContext with SetLimit(%d) per request, against a batch per request on one pool of %d workers, plain, with a Recorder that does nothing (WithMetrics), and as examples/server is configured (WithFairShare, WithMetrics, a tenant per client, four clients in turn). ns per job, a request's set-up and Wait included (testing.Benchmark, the median of the runs, the ways interleaved within each run), and each way's time as a share of errgroup's.\n\n", serverJobs, r.batchWorkers, r.batchWorkers)
	p("| GOMAXPROCS |")
	for _, w := range serverWays {
		p(" %s |", w)
	}
	p(" allocs per request (batch, metrics, fair) |\n|---|---|---|---|---|---|\n")
	for _, s := range r.serverPath {
		p("| %d | %.0f ns |", s.procs, s.ns[0])
		for _, ns := range s.ns[1:] {
			p(" %.0f ns (%.2fx) |", ns, ns/s.ns[0])
		}
		p(" %.0f, %.0f, %.0f |\n", s.allocs[1], s.allocs[2], s.allocs[3])
	}
	p("\n")
}

// serverPathTargets judges the server path: a batch per request at most
// 0.5x errgroup's time per request, and with WithMetrics at most 0.55x,
// at every GOMAXPROCS measured. (The fair configuration's 0.6x is for the
// fair admission to come: reported, not judged.)
func (r *batchesScenario) serverPathTargets() []target {
	var ts []target
	for _, s := range r.serverPath {
		for i, limit := range [...]float64{1: 0.5, 2: 0.55} {
			if limit == 0 {
				continue
			}
			x := s.ns[i] / s.ns[0]
			ts = append(ts, target{
				fmt.Sprintf("server path, GOMAXPROCS %d: %s <= %gx errgroup per request", s.procs, serverWays[i], limit),
				fmt.Sprintf("%.2fx (%.0f vs %.0f ns/job)", x, s.ns[i], s.ns[0]), x <= limit})
		}
	}
	return ts
}
