package promcrew

import (
	"math"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// An Option configures a Collector (see New).
type Option func(*config)

type config struct {
	namespace string
	labels    prometheus.Labels
	upper     []float64 // the histograms' upper bounds, in seconds, increasing, without +Inf
}

// DefaultBuckets are the histograms' buckets unless WithBuckets is given,
// in seconds: powers of 4 from 1 µs to 16.8 s (1 µs, 4 µs, 16 µs, ...,
// 1.05 s, 4.19 s, 16.8 s), 13 buckets and +Inf.
var DefaultBuckets = prometheus.ExponentialBuckets(1e-6, 4, 13)

// WithNamespace sets the first part of every family's name: "crew" unless
// given ("crew_pool_run_seconds"); "" leaves it out ("pool_run_seconds").
// The dashboard in grafana/crew.json expects "crew".
func WithNamespace(ns string) Option {
	return func(c *config) { c.namespace = ns }
}

// WithConstLabels adds labels with fixed values to every series, such as
// the service's name. They must not be "pool", "actor" or "tenant".
func WithConstLabels(l prometheus.Labels) Option {
	return func(c *config) { c.labels = l }
}

// WithBuckets sets the upper bounds of the queue-wait and run-time
// histograms' buckets, in seconds, increasing (DefaultBuckets unless
// given); a last +Inf is implied. Bounds that do not increase panic.
func WithBuckets(upper ...float64) Option {
	if len(upper) > 0 && math.IsInf(upper[len(upper)-1], 1) {
		upper = upper[:len(upper)-1]
	}
	for i := 1; i < len(upper); i++ {
		if !(upper[i] > upper[i-1]) {
			panic("promcrew: WithBuckets: the upper bounds must increase")
		}
	}
	return func(c *config) { c.upper = slices.Clone(upper) }
}
