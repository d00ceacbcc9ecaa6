package otelcrew_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/crewlib/crew"
	"github.com/crewlib/crew/otelcrew"
)

// A pool's jobs, counted and timed by the OpenTelemetry SDK. In a program,
// the MeterProvider is otel.GetMeterProvider(), or one with an exporter's
// reader; here a manual reader shows what it collects.
func Example() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	m, err := otelcrew.New(mp)
	if err != nil {
		panic(err)
	}
	p := crew.NewGroup(4, crew.WithName("resize"), crew.WithMetrics(m))
	for range 3 {
		_ = p.Submit(context.Background(), func(context.Context) error { return nil })
	}
	_ = p.Wait()

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, sm := range rm.ScopeMetrics {
		for _, metric := range sm.Metrics {
			switch data := metric.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range data.DataPoints {
					if v, ok := dp.Attributes.Value(otelcrew.PoolKey); ok {
						fmt.Printf("%s{%s} %d\n", metric.Name, v.AsString(), dp.Value)
					}
				}
			case metricdata.Histogram[float64]:
				for _, dp := range data.DataPoints {
					fmt.Printf("%s: %d observations\n", metric.Name, dp.Count)
				}
			}
		}
	}
	// Unordered output:
	// crew.pool.submitted.jobs{resize} 3
	// crew.pool.completed.jobs{resize} 3
	// crew.pool.failed.jobs{resize} 0
	// crew.pool.panicked.jobs{resize} 0
	// crew.pool.skipped.jobs{resize} 0
	// crew.pool.dropped.jobs{resize} 0
	// crew.pool.replaced.workers{resize} 0
	// crew.pool.size.grown{resize} 0
	// crew.pool.size.shrunk{resize} 0
	// crew.pool.size.backed_off{resize} 0
	// crew.pool.job.wait.duration: 3 observations
	// crew.pool.job.run.duration: 3 observations
}
