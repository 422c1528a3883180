package dashboards

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGrafanaCompatibility backs the range docs/dashboards.md claims (Grafana
// 10.4 to 12): the files declare schemaVersion 39, which Grafana 10.4 writes,
// use no field value only newer releases know (the SDK's default link
// placement "inControlsMenu" is Grafana 12-only), and contain nothing that the
// schema migrations Grafana 11 and 12 run on load (V40 refresh to a string,
// V41 drop timepicker.time_options, V42 hideFrom.tooltip next to
// hideFrom.viz) would change, so every supported version shows the same
// dashboard.
func TestGrafanaCompatibility(t *testing.T) {
	for f := range dashboardFiles(t) {
		t.Run(f.variant+"/"+f.name, func(t *testing.T) {
			var doc struct {
				SchemaVersion int             `json:"schemaVersion"`
				Refresh       json.RawMessage `json:"refresh"`
				Timepicker    map[string]any  `json:"timepicker"`
			}
			if err := json.Unmarshal(f.raw, &doc); err != nil {
				t.Fatal(err)
			}
			if doc.SchemaVersion != SchemaVersion {
				t.Errorf("schemaVersion %d, want %d", doc.SchemaVersion, SchemaVersion)
			}
			var refresh string
			if err := json.Unmarshal(doc.Refresh, &refresh); err != nil {
				t.Errorf("refresh %s is not a string (schema migration 40 would rewrite it)", doc.Refresh)
			}
			if _, ok := doc.Timepicker["time_options"]; ok {
				t.Error("timepicker.time_options present (schema migration 41 removes it)")
			}
			for _, newer := range []string{`"inControlsMenu"`, `"custom.hideFrom"`, `"timeSeriesTable"`} {
				if strings.Contains(string(f.raw), newer) {
					t.Errorf("%s present: only newer Grafana releases know it, or a migration rewrites it", newer)
				}
			}
		})
	}
}
