package promcrew_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dashboard is the part of grafana/crew.json that the test reads.
type dashboard struct {
	Templating struct {
		List []struct {
			Type, Name string
			Query      any
			Datasource *datasource
		}
	}
	Panels []panel
}

type panel struct {
	Type, Title string
	Datasource  *datasource
	Targets     []struct {
		Expr       string
		Datasource *datasource
	}
}

type datasource struct{ Type, UID string }

var metricName = regexp.MustCompile(`\b[a-z_]+_[a-z_]+\b`)

// The dashboard's queries use only the families a Collector exports: they
// cannot drift apart.
func TestTheDashboardQueriesOnlyExportedMetrics(t *testing.T) {
	raw, err := os.ReadFile("grafana/crew.json")
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(raw, &d), "valid JSON")

	_, reg, end := everyFamily(t)
	defer end()
	fams, err := reg.Gather()
	require.NoError(t, err)
	exported := make(map[string]bool)
	for _, f := range fams {
		exported[f.GetName()] = true
		if f.GetType() == dto.MetricType_HISTOGRAM {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				exported[f.GetName()+suffix] = true
			}
		}
	}

	vars := make(map[string]string)
	var queries []string
	for _, v := range d.Templating.List {
		vars[v.Name] = v.Type
		if v.Type == "query" {
			q, err := json.Marshal(v.Query)
			require.NoError(t, err)
			queries = append(queries, string(q))
			require.NotNil(t, v.Datasource, v.Name)
			assert.Equal(t, "${datasource}", v.Datasource.UID, v.Name)
		}
	}
	assert.Equal(t, "datasource", vars["datasource"], "a Prometheus data source variable")
	assert.Equal(t, "query", vars["pool"], "a pool variable")
	assert.Equal(t, "query", vars["actor"], "an actor variable")

	titles := make(map[string]bool)
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		assert.False(t, titles[p.Title], "one panel per title: %s", p.Title)
		titles[p.Title] = true
		require.NotNil(t, p.Datasource, p.Title)
		assert.Equal(t, "${datasource}", p.Datasource.UID, p.Title)
		assert.NotEmpty(t, p.Targets, p.Title)
		for _, target := range p.Targets {
			queries = append(queries, target.Expr)
		}
	}
	for _, want := range []string{"Jobs/s by outcome", "Queue wait p50 / p99", "Run time p50 / p99", "Backlog",
		"Running jobs vs workers", "Blocked Submits", "Tenant run-time share",
		"Messages told / handled per second", "Mailbox depth", "Dead letters per second"} {
		assert.True(t, titles[want], "a panel %q", want)
	}

	used := make(map[string]bool)
	for _, q := range queries {
		for _, name := range metricName.FindAllString(q, -1) {
			if strings.HasPrefix(name, "crew_") {
				used[name] = true
				assert.True(t, exported[name], "%s in %s is not exported", name, q)
			}
		}
	}
	for _, f := range fams { // every family is on the dashboard, or on purpose not
		name := f.GetName()
		onPurpose := map[string]bool{"crew_actor_messages_panicked_total": true, "crew_actor_busy": true, "crew_actor_live": true,
			"crew_pool_workers_replaced_total": true, "crew_actor_goroutines_replaced_total": true, // rare: for alerts, not a panel
			"crew_pool_size_grown_total": true, "crew_pool_size_shrunk_total": true, "crew_pool_size_backed_off_total": true} // the workers panel shows the size
		assert.True(t, used[name] || used[name+"_bucket"] || used[name+"_sum"] || onPurpose[name], "%s is on no panel", name)
	}
}
