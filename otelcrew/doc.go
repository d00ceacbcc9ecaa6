// Package otelcrew reports what crew's pools, actors and routers do as
// OpenTelemetry metrics: a crew.Metrics made of instruments of
// go.opentelemetry.io/otel/metric, for any MeterProvider.
//
//	m, err := otelcrew.New(otel.GetMeterProvider())
//	if err != nil {
//		return err
//	}
//	p := crew.NewPool(n, handle, crew.WithName("resize"), crew.WithMetrics(m))
//
// One Metrics serves every pool, actor and router of a process. Each
// source's data points carry its name (crew.WithName), as crew.pool for a
// pool and as crew.actor for an actor or a router; sources of one name add
// up. The README lists the instruments.
//
// # Cost
//
// A pool's job costs two calls into the SDK, the histograms' records of
// its queue wait and run time, with an attribute set built once per name,
// and two atomic adds for its counts; no allocation. Counts, a pool's
// tenants' run time and the gauges are asynchronous instruments:
// one callback reports them when the metrics are collected, reading the
// counts kept per name and summing crew.Source.Gauges over the live
// sources. An actor's message costs two atomic adds. The README gives the
// figure per job against a pool without metrics.
package otelcrew
