package crew_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/crewlib/crew"
)

const benchWorkers = 8

func noop(context.Context) error { return nil }

// BenchmarkPool sends b.N no-op jobs through 8 workers, from one submitter
// and from 8, next to the baselines: a hand-written pool of 8 goroutines
// reading one buffered channel, and errgroup with SetLimit(8). ns/op is the
// cost of one job, start-up and Wait included.
func BenchmarkPool(b *testing.B) {
	for _, submitters := range []int{1, 8} {
		name := strconv.Itoa(submitters) + "submitters/"
		for _, s := range []struct {
			name string
			opts []crew.Option
		}{
			{"crew", nil},
			{"crew-RoundRobin", []crew.Option{crew.WithStrategy(crew.RoundRobin())}},
			{"crew-SmallestOfTwo", []crew.Option{crew.WithStrategy(crew.SmallestOfTwo())}},
			{"crew-unbounded", []crew.Option{crew.WithMailbox(func() crew.Mailbox[crew.Job] { return crew.NewUnbounded[crew.Job]() })}},
			{"crew-queue16", []crew.Option{crew.WithQueueSize(16)}},
		} {
			b.Run(name+s.name, func(b *testing.B) { benchGroup(b, submitters, s.opts...) })
		}
		b.Run(name+"handwritten", func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			jobs := make(chan crew.Job, benchWorkers)
			var wg sync.WaitGroup
			for range benchWorkers {
				wg.Go(func() {
					for j := range jobs {
						_ = j(ctx)
					}
				})
			}
			fanOut(b, submitters, func(n int) {
				for range n {
					jobs <- noop
				}
			})
			close(jobs)
			wg.Wait()
		})
		b.Run(name+"errgroup", func(b *testing.B) {
			b.ReportAllocs()
			g, ctx := errgroup.WithContext(context.Background())
			g.SetLimit(benchWorkers)
			fanOut(b, submitters, func(n int) {
				for range n {
					g.Go(func() error { return noop(ctx) })
				}
			})
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// benchGroup sends b.N no-op jobs from submitters goroutines through a
// group of benchWorkers workers made with opts.
func benchGroup(b *testing.B, submitters int, opts ...crew.Option) {
	b.ReportAllocs()
	p := crew.NewGroup(benchWorkers, opts...)
	ctx := context.Background()
	fanOut(b, submitters, func(n int) {
		for range n {
			if err := p.Submit(ctx, noop); err != nil {
				b.Error(err)
				return
			}
		}
	})
	if err := p.Wait(); err != nil {
		b.Fatal(err)
	}
}

// fanOut splits b.N jobs between submitters goroutines calling submit.
func fanOut(b *testing.B, submitters int, submit func(n int)) {
	b.ResetTimer()
	if submitters == 1 {
		submit(b.N)
		return
	}
	var wg sync.WaitGroup
	for i := range submitters {
		n := b.N / submitters
		if i == 0 {
			n += b.N % submitters
		}
		wg.Go(func() { submit(n) })
	}
	wg.Wait()
}

// nopMetrics is a Metrics whose Recorder does nothing: what WithMetrics
// costs crew itself.
type nopMetrics struct{}

func (nopMetrics) Track(crew.Source) crew.Recorder             { return nopRecorder{} }
func (nopRecorder) Add(crew.Event, int)                        {}
func (nopRecorder) Observe(crew.Timing, time.Duration, string) {}
func (nopRecorder) Close()                                     {}

type nopRecorder struct{}

// BenchmarkPoolMetrics sends b.N no-op jobs through 8 workers without
// metrics and with a Metrics that does nothing (WithMetrics's own cost:
// two clock reads and four calls per job), from one submitter and from 8.
func BenchmarkPoolMetrics(b *testing.B) {
	for _, submitters := range []int{1, 8} {
		for _, s := range []struct {
			name string
			opts []crew.Option
		}{
			{"none", nil},
			{"nop", []crew.Option{crew.WithMetrics(nopMetrics{})}},
			// What WithAdaptiveSize's measurement costs a job: with min =
			// max, the controller measures every job and never resizes.
			{"adaptive", []crew.Option{crew.WithAdaptiveSize(benchWorkers, benchWorkers)}},
		} {
			b.Run(strconv.Itoa(submitters)+"submitters/"+s.name, func(b *testing.B) { benchGroup(b, submitters, s.opts...) })
		}
	}
}

// BenchmarkOwnSubmit submits b.N no-op jobs from the pool's jobs, on a
// full pool: benchWorkers jobs hold every worker (WithQueueSize(0)), and
// each submits its share with the context it received, and with one
// derived from it, so that each Submit runs its job inline. Beside it,
// the baseline: the job called directly.
func BenchmarkOwnSubmit(b *testing.B) {
	b.Run("call", func(b *testing.B) {
		b.ReportAllocs()
		ctx := context.Background()
		for range b.N {
			if err := noop(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, derive := range []bool{false, true} {
		name := "received-ctx"
		if derive {
			name = "derived-ctx"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			p := crew.NewGroup(benchWorkers, crew.WithQueueSize(0))
			var started, submitted sync.WaitGroup
			started.Add(benchWorkers)
			submitted.Add(benchWorkers)
			gate := make(chan struct{})
			for i := range benchWorkers {
				n := b.N / benchWorkers
				if i == 0 {
					n += b.N % benchWorkers
				}
				err := p.Submit(context.Background(), func(ctx context.Context) error {
					started.Done()
					<-gate // every worker holds a job: the pool is full
					if derive {
						ctx = context.WithValue(ctx, depthKey{}, i)
					}
					defer submitted.Wait() // keep the pool full until every job submitted its share
					defer submitted.Done()
					for range n {
						if err := p.Submit(ctx, noop); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			started.Wait()
			b.ResetTimer()
			close(gate)
			if err := p.Wait(); err != nil {
				b.Fatal(err)
			}
			if s := p.Stats(); s.Inline != int64(b.N) {
				b.Fatalf("%d of %d jobs ran inline", s.Inline, b.N)
			}
		})
	}
}
