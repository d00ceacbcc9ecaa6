package otelcrew

// An Option configures New.
type Option func(*config)

type config struct {
	buckets []float64
}

// defaultBuckets are the bucket boundaries, in seconds, that the
// histograms of queue waits and run times advise by default: 1 µs to 10 s,
// three a decade. A View of the MeterProvider overrides them.
var defaultBuckets = []float64{
	1e-6, 2.5e-6, 5e-6,
	1e-5, 2.5e-5, 5e-5,
	1e-4, 2.5e-4, 5e-4,
	1e-3, 2.5e-3, 5e-3,
	0.01, 0.025, 0.05,
	0.1, 0.25, 0.5,
	1, 2.5, 5, 10,
}

// WithBuckets makes the histograms of queue waits and run times advise
// the bucket boundaries bounds, in seconds, instead of the default: 1 µs
// to 10 s, at 1, 2.5 and 5 a decade. Bounds that do not increase strictly
// panic.
func WithBuckets(bounds ...float64) Option {
	for i := 1; i < len(bounds); i++ {
		if !(bounds[i-1] < bounds[i]) {
			panic("otelcrew: WithBuckets: the boundaries must increase strictly")
		}
	}
	bounds = append([]float64(nil), bounds...)
	return func(c *config) { c.buckets = bounds }
}
