package promcrew_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/crewlib/crew/promcrew"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// families are the metric families of one scrape, by name.
type families map[string]*dto.MetricFamily

// registered returns a Collector registered in a fresh registry that
// checks what it collects against what it describes.
func registered(t *testing.T, opts ...promcrew.Option) (*promcrew.Collector, *prometheus.Registry) {
	t.Helper()
	c := promcrew.New(opts...)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	return c, reg
}

// handler serves reg's metrics as an application would.
func handler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
}

// scrape reads /metrics from reg through promhttp, in the text format
// Prometheus reads, without a network (so also in a synctest bubble).
func scrape(t *testing.T, reg *prometheus.Registry) families {
	t.Helper()
	rec := httptest.NewRecorder()
	handler(reg).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return parse(t, rec.Body)
}

// scrapeServer reads /metrics from a server over HTTP.
func scrapeServer(t *testing.T, srv *httptest.Server) families {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	return parse(t, resp.Body)
}

func parse(t *testing.T, r io.Reader) families {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	require.NoError(t, err)
	return fams
}

// series returns the series of family name whose labels include the
// given name-value pairs, or nil.
func (f families) series(name string, pairs ...string) *dto.Metric {
	fam := f[name]
	if fam == nil {
		return nil
	}
next:
	for _, m := range fam.GetMetric() {
		for i := 0; i < len(pairs); i += 2 {
			if label(m, pairs[i]) != pairs[i+1] {
				continue next
			}
		}
		return m
	}
	return nil
}

// value returns the value of a counter or gauge series (see series), or
// -1 if there is none.
func (f families) value(name string, pairs ...string) float64 {
	m := f.series(name, pairs...)
	switch {
	case m == nil:
		return -1
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return -1
}

// count returns the number of observations of a histogram series, or -1.
func (f families) count(name string, pairs ...string) int {
	m := f.series(name, pairs...)
	if m == nil || m.Histogram == nil {
		return -1
	}
	return int(m.Histogram.GetSampleCount())
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
