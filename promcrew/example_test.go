package promcrew_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/crewlib/crew"
	"github.com/crewlib/crew/promcrew"
)

// A pool exported to Prometheus: register a Collector, give the pool a
// name and the Collector, and serve the registry. With Prometheus's
// default registry, that is prometheus.MustRegister(c) and
// http.Handle("/metrics", promhttp.Handler()).
func Example() {
	c := promcrew.New()
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	resize := func(_ context.Context, size int) error {
		if size <= 0 {
			return errors.New("no size")
		}
		return nil
	}
	p := crew.NewPool(4, resize, crew.WithName("resize"), crew.WithMetrics(c))
	for _, size := range []int{640, 0, 1280} {
		_ = p.Submit(context.Background(), size)
	}
	_ = p.Wait()

	client := srv.Client()
	defer client.CloseIdleConnections()
	resp, err := client.Get(srv.URL + "/metrics")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if line := lines.Text(); strings.HasPrefix(line, "crew_pool_jobs_") || strings.HasPrefix(line, "crew_pool_run_seconds_count") {
			fmt.Println(line)
		}
	}
	// Output:
	// crew_pool_jobs_completed_total{pool="resize"} 3
	// crew_pool_jobs_dropped_total{pool="resize"} 0
	// crew_pool_jobs_failed_total{pool="resize"} 1
	// crew_pool_jobs_panicked_total{pool="resize"} 0
	// crew_pool_jobs_skipped_total{pool="resize"} 0
	// crew_pool_jobs_submitted_total{pool="resize"} 3
	// crew_pool_run_seconds_count{pool="resize"} 3
}
