package dashboards

import (
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/prometheus/common/model"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

var registerPlugins sync.Once

// decode strictly decodes one dashboard JSON with the SDK, the way a tool
// built on the SDK would read our files.
func decode(t *testing.T, name string, raw []byte) dashboard.Dashboard {
	t.Helper()
	// Panel options and targets decode into typed structs only once the
	// SDK's panel and datasource plugins are registered.
	registerPlugins.Do(plugins.RegisterDefaultPlugins)
	var d dashboard.Dashboard
	if err := d.UnmarshalJSONStrict(raw); err != nil {
		t.Fatalf("%s: strict decode: %v", name, err)
	}
	return d
}

// committed reads every dashboards/*.json of the checkout, keyed by file name.
func committed(t *testing.T) map[string][]byte {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(testkit.RepoRoot(t), Dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("no dashboards/*.json committed")
	}
	files := make(map[string][]byte)
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(n)] = b
	}
	return files
}

// customised is a pack config that changes everything a user can change that
// reaches the dashboards, so the checks also cover non-default output.
func customised() packconfig.Config {
	cfg := packconfig.Default()
	cfg.Selectors.Library = `cluster="eu1", job=~"workers|schedulers"`
	cfg.Selectors.Exporter = `cluster="eu1"`
	cfg.RecordingWindows = []model.Duration{model.Duration(2 * 60e9), model.Duration(60 * 60e9)}
	cfg.Alerts.NotOwnedRatio.Slow.Threshold = 0.2
	cfg.Alerts.NotOwnedRatio.Fast.Threshold = 0.1
	cfg.Alerts.RenewalFailureRatio.Disabled = true
	cfg.Alerts.Abandonments.Disabled = true
	cfg.Alerts.RenewalStalled.Disabled = true
	cfg.Alerts.KeyWithoutTTL.Disabled = true
	cfg.Alerts.LapseRatio.Threshold = 0.2
	cfg.Alerts.TakeoverRatio.Disabled = true
	cfg.Dashboards = packconfig.Dashboards{
		Datasource:      "prod-prometheus",
		DatasourceRegex: "/^prod-.*/",
		Tags:            []string{"redis", "lockwatch"},
		Refresh:         "2m",
		TimeRange:       "1d",
		Timezone:        "utc",
		StalestKeys:     25,
	}
	return cfg
}

// output is a set of generated dashboards and the config they came from.
type output struct {
	cfg   packconfig.Config
	files map[string][]byte
}

// outputs are the dashboards every check runs on: the committed files (the
// output for the default config), the output for a customised config and the
// output with two cluster labels.
func outputs(t *testing.T) map[string]output {
	t.Helper()
	multi := packconfig.Default()
	multi.ClusterLabels = []string{"region", "cluster"}
	return map[string]output{
		"committed":     {packconfig.Default(), committed(t)},
		"customised":    {customised(), generate(t, customised())},
		"multi-cluster": {multi, generate(t, multi)},
	}
}

// dashboardFile is one dashboard of one of the outputs.
type dashboardFile struct {
	variant, name string
	raw           []byte
	cfg           packconfig.Config
}

// dashboardFiles yields every dashboard of every output, each output's files in name order.
func dashboardFiles(t *testing.T) iter.Seq[dashboardFile] {
	outs := outputs(t)
	return func(yield func(dashboardFile) bool) {
		for variant, out := range outs {
			for _, name := range slices.Sorted(maps.Keys(out.files)) {
				if !yield(dashboardFile{variant, name, out.files[name], out.cfg}) {
					return
				}
			}
		}
	}
}

// panels flattens a dashboard's panels, including those inside collapsed rows.
func panels(d dashboard.Dashboard) []dashboard.Panel {
	var ps []dashboard.Panel
	for _, p := range d.Panels {
		if p.Panel != nil {
			ps = append(ps, *p.Panel)
		}
		if p.RowPanel != nil {
			ps = append(ps, p.RowPanel.Panels...)
		}
	}
	return ps
}

// rowsOf returns each row title with the titles of the panels under it.
func rowsOf(d dashboard.Dashboard) [][]string {
	var rows [][]string
	for _, p := range d.Panels {
		switch {
		case p.RowPanel != nil:
			rows = append(rows, []string{*p.RowPanel.Title})
			for _, in := range p.RowPanel.Panels {
				rows[len(rows)-1] = append(rows[len(rows)-1], *in.Title)
			}
		case len(rows) > 0:
			rows[len(rows)-1] = append(rows[len(rows)-1], *p.Panel.Title)
		}
	}
	return rows
}
