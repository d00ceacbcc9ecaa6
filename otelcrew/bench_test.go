package otelcrew_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/crewlib/crew"
)

// BenchmarkPoolMetrics sends b.N no-op jobs through 8 workers without
// metrics, with a Metrics that does nothing (crew's own cost: two clock
// reads per job), and with otelcrew's instruments on the SDK's
// MeterProvider (a manual reader, never collected), from one submitter and
// from 8: ns/op is the cost of one job, start-up and Wait included.
func BenchmarkPoolMetrics(b *testing.B) {
	for _, submitters := range []int{1, 8} {
		b.Run(strconv.Itoa(submitters)+"submitters/none", func(b *testing.B) { benchGroup(b, submitters) })
		b.Run(strconv.Itoa(submitters)+"submitters/nop", func(b *testing.B) {
			benchGroup(b, submitters, crew.WithName("bench"), crew.WithMetrics(nopMetrics{}))
		})
		b.Run(strconv.Itoa(submitters)+"submitters/otel", func(b *testing.B) {
			m, _ := newMetrics(b)
			benchGroup(b, submitters, crew.WithName("bench"), crew.WithMetrics(m))
		})
	}
}

// benchGroup sends b.N no-op jobs from submitters goroutines through a
// group of 8 workers made with opts (as crew's own benchmarks do).
func benchGroup(b *testing.B, submitters int, opts ...crew.Option) {
	b.ReportAllocs()
	p := crew.NewGroup(8, opts...)
	ctx := context.Background()
	noop := func(context.Context) error { return nil }
	b.ResetTimer()
	var wg sync.WaitGroup
	for i := range submitters {
		n := b.N / submitters
		if i == 0 {
			n += b.N % submitters
		}
		wg.Go(func() {
			for range n {
				if err := p.Submit(ctx, noop); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := p.Wait(); err != nil {
		b.Fatal(err)
	}
}

// nopMetrics is a Metrics whose Recorder does nothing.
type nopMetrics struct{}

type nopRecorder struct{}

func (nopMetrics) Track(crew.Source) crew.Recorder             { return nopRecorder{} }
func (nopRecorder) Add(crew.Event, int)                        {}
func (nopRecorder) Observe(crew.Timing, time.Duration, string) {}
func (nopRecorder) Close()                                     {}

// BenchmarkRecorder is the cost of each call a pool's job makes: a count
// (an atomic add) and a duration (a histogram record in the SDK), from one
// goroutine and from GOMAXPROCS at once on one data point.
func BenchmarkRecorder(b *testing.B) {
	m, _ := newMetrics(b)
	r := m.Track(crew.Source{Kind: crew.SourcePool, Name: "bench", Gauges: func() crew.Gauges { return crew.Gauges{} }})
	defer r.Close()
	calls := []struct {
		name string
		call func()
	}{
		{"Add", func() { r.Add(crew.EventSubmitted, 1) }},
		{"Observe", func() { r.Observe(crew.RunTime, time.Microsecond, "") }},
	}
	for _, c := range calls {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.call()
			}
		})
		b.Run(c.name+"-parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					c.call()
				}
			})
		})
	}
}
