package otelcrew_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/goleak"

	"github.com/crewlib/crew/otelcrew"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newMetrics returns a Metrics recording to an SDK MeterProvider, and the
// manual reader that collects from it.
func newMetrics(t testing.TB, opts ...otelcrew.Option) (*otelcrew.Metrics, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { require.NoError(t, mp.Shutdown(context.Background())) })
	m, err := otelcrew.New(mp, opts...)
	require.NoError(t, err)
	return m, reader
}

// A reading is what one Collect returned, by data point:
// "name{attributes}", as crew.pool.submitted.jobs{crew.pool=work}.
type reading struct {
	metrics map[string]metricdata.Metrics                     // by instrument name
	ints    map[string]int64                                  // the int64 sums' points
	floats  map[string]float64                                // the float64 sums' points
	hists   map[string]metricdata.HistogramDataPoint[float64] // the histograms' points
}

// collect reads every data point of reader's instruments of otelcrew.
func collect(t testing.TB, reader *sdkmetric.ManualReader) reading {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	r := reading{
		metrics: make(map[string]metricdata.Metrics),
		ints:    make(map[string]int64),
		floats:  make(map[string]float64),
		hists:   make(map[string]metricdata.HistogramDataPoint[float64]),
	}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, otelcrew.ScopeName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			r.metrics[m.Name] = m
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range data.DataPoints {
					r.ints[point(m.Name, p.Attributes)] = p.Value
				}
			case metricdata.Sum[float64]:
				for _, p := range data.DataPoints {
					r.floats[point(m.Name, p.Attributes)] = p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range data.DataPoints {
					r.hists[point(m.Name, p.Attributes)] = p
				}
			default:
				t.Fatalf("%s: unexpected %T", m.Name, m.Data)
			}
		}
	}
	return r
}

func point(name string, attrs attribute.Set) string {
	return name + "{" + attrs.Encoded(attribute.DefaultEncoder()) + "}"
}

// of returns the points whose name starts with prefix and whose
// attributes are attrs ("crew.pool=work").
func of[V any](points map[string]V, prefix, attrs string) map[string]V {
	out := make(map[string]V)
	for k, v := range points {
		if strings.HasPrefix(k, prefix) && strings.HasSuffix(k, "{"+attrs+"}") {
			out[strings.TrimSuffix(k, "{"+attrs+"}")] = v
		}
	}
	return out
}

// gauges are the names of the asynchronous instruments.
var gauges = map[string]bool{
	"crew.pool.queue.length":    true,
	"crew.pool.job.running":     true,
	"crew.pool.worker.count":    true,
	"crew.pool.submit.blocked":  true,
	"crew.actor.mailbox.length": true,
	"crew.actor.busy":           true,
	"crew.actor.count":          true,
}

// split returns the points of r.ints whose attributes are attrs, the
// counters' and the gauges' apart, by instrument name.
func (r reading) split(attrs string) (counts, levels map[string]int64) {
	counts, levels = make(map[string]int64), make(map[string]int64)
	for name, v := range of(r.ints, "crew.", attrs) {
		if gauges[name] {
			levels[name] = v
		} else {
			counts[name] = v
		}
	}
	return counts, levels
}

// poolCounts returns a pool's counters as split returns them; resizes
// are its grown, shrunk and backed off counts, 0 if not given.
func poolCounts(submitted, completed, failed, panicked, skipped, dropped, replaced int64, resizes ...int64) map[string]int64 {
	resizes = append(resizes, 0, 0, 0)
	return map[string]int64{
		"crew.pool.size.grown":       resizes[0],
		"crew.pool.size.shrunk":      resizes[1],
		"crew.pool.size.backed_off":  resizes[2],
		"crew.pool.submitted.jobs":   submitted,
		"crew.pool.completed.jobs":   completed,
		"crew.pool.failed.jobs":      failed,
		"crew.pool.panicked.jobs":    panicked,
		"crew.pool.skipped.jobs":     skipped,
		"crew.pool.dropped.jobs":     dropped,
		"crew.pool.replaced.workers": replaced,
	}
}

// actorCounts returns an actor's or a router's counters as split returns
// them.
func actorCounts(told, handled, failed, panicked, dropped, replaced int64) map[string]int64 {
	return map[string]int64{
		"crew.actor.told.messages":       told,
		"crew.actor.handled.messages":    handled,
		"crew.actor.failed.messages":     failed,
		"crew.actor.panicked.messages":   panicked,
		"crew.actor.dropped.messages":    dropped,
		"crew.actor.replaced.goroutines": replaced,
	}
}

// poolLevels returns a pool's gauges as split returns them.
func poolLevels(queued, running, workers, blocked int64) map[string]int64 {
	return map[string]int64{
		"crew.pool.queue.length":   queued,
		"crew.pool.job.running":    running,
		"crew.pool.worker.count":   workers,
		"crew.pool.submit.blocked": blocked,
	}
}

// actorLevels returns an actor's or a router's gauges as split returns
// them.
func actorLevels(mailbox, busy, live int64) map[string]int64 {
	return map[string]int64{
		"crew.actor.mailbox.length": mailbox,
		"crew.actor.busy":           busy,
		"crew.actor.count":          live,
	}
}
