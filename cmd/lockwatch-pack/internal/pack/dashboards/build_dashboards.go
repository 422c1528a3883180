package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// Dir is the directory of a lockwatch checkout that holds the dashboards.
const Dir = "dashboards"

// Generate is the dashboards' pack.Generator: every lockwatch dashboard for cfg as Grafana
// dashboard JSON, named <uid>.json under Dir. The same cfg always yields the same bytes.
func Generate(cfg packconfig.Config) ([]pack.File, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := newSettings(cfg)
	var files []pack.File
	for _, d := range []struct {
		uid   string
		build func(settings) *dashboard.DashboardBuilder
	}{
		{InstancesUID, instances},
		{OverviewUID, overview},
	} {
		data, err := render(d.build(s))
		if err != nil {
			return nil, fmt.Errorf("dashboard %s: %w", d.uid, err)
		}
		files = append(files, pack.File{Path: Dir + "/" + d.uid + ".json", Data: data})
	}
	return files, nil
}

// SchemaVersion is the dashboard schema version the files declare: the one
// late Grafana 10 releases write (10.4 is the oldest docs/dashboards.md
// claims, and says what that rests on). The SDK
// defaults to 42 (Grafana 12), which an older Grafana has never heard of.
// Grafana 11 and 12 migrate 39 up on load with schema migrations 40 to 42,
// which change nothing in these files (a string refresh, no timepicker
// time_options, no hideFrom overrides); compat_test.go checks that they stay
// no-ops.
const SchemaVersion = 39

// render builds d, numbers its panels and encodes it as indented JSON with a
// trailing newline. Panel ids are assigned in layout order so they stay
// stable across runs (Grafana uses them in viewPanel links).
func render(d *dashboard.DashboardBuilder) ([]byte, error) {
	built, err := d.Build()
	if err != nil {
		return nil, err
	}
	built.SchemaVersion = SchemaVersion
	// The SDK sets every link's placement to "inControlsMenu", a value only
	// recent Grafana 12 releases know; without it every version shows the
	// link in the dashboard's link bar.
	for i := range built.Links {
		built.Links[i].Placement = nil
	}
	id := uint32(0)
	for i := range built.Panels {
		id++
		switch p := built.Panels[i]; {
		case p.Panel != nil:
			p.Panel.Id = cog.ToPtr(id)
		case p.RowPanel != nil:
			p.RowPanel.Id = id
			for j := range p.RowPanel.Panels {
				id++
				p.RowPanel.Panels[j].Id = cog.ToPtr(id)
			}
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	// Keep <, > and & readable in PromQL instead of \u003c escapes.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(built); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
