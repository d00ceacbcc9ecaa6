package promcrew_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/crewlib/crew"
	"github.com/crewlib/crew/promcrew"
)

const benchWorkers = 8

func noop(context.Context) error { return nil }

// nopMetrics is a Metrics whose Recorder does nothing: what WithMetrics
// costs crew itself, without promcrew.
type nopMetrics struct{}

type nopRecorder struct{}

func (nopMetrics) Track(crew.Source) crew.Recorder             { return nopRecorder{} }
func (nopRecorder) Add(crew.Event, int)                        {}
func (nopRecorder) Observe(crew.Timing, time.Duration, string) {}
func (nopRecorder) Close()                                     {}

// BenchmarkPoolMetrics sends b.N no-op jobs through 8 workers, from one
// submitter and from 8: without metrics, with a Metrics that does nothing,
// and with a Collector. ns/op
// is the cost of one job, start-up and Wait included.
func BenchmarkPoolMetrics(b *testing.B) {
	for _, submitters := range []int{1, 8} {
		for _, s := range []struct {
			name    string
			metrics func() crew.Metrics
		}{
			{"none", nil},
			{"nop", func() crew.Metrics { return nopMetrics{} }},
			{"promcrew", func() crew.Metrics { return promcrew.New() }},
		} {
			b.Run("submitters="+strconv.Itoa(submitters)+"/metrics="+s.name, func(b *testing.B) {
				var opts []crew.Option
				if s.metrics != nil {
					opts = append(opts, crew.WithMetrics(s.metrics()))
				}
				benchGroup(b, submitters, opts...)
			})
		}
	}
}

// benchGroup sends b.N no-op jobs from submitters goroutines through a
// group of benchWorkers workers made with opts.
func benchGroup(b *testing.B, submitters int, opts ...crew.Option) {
	b.ReportAllocs()
	p := crew.NewGroup(benchWorkers, opts...)
	ctx := context.Background()
	submit := func(n int) {
		for range n {
			if err := p.Submit(ctx, noop); err != nil {
				b.Error(err)
				return
			}
		}
	}
	b.ResetTimer()
	if submitters == 1 {
		submit(b.N)
	} else {
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
	if err := p.Wait(); err != nil {
		b.Fatal(err)
	}
}
