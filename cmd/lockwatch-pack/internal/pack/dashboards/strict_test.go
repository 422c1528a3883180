package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// TestStrictDecodeAndValidate decodes every dashboard with the SDK's strict
// decoder (unknown or mistyped fields fail), runs its Validate, and checks
// that nothing fell back to an untyped bag: every target is a typed
// Prometheus query and every panel's options decoded into its plugin's type.
// Re-encoding the decoded dashboard must give back the exact bytes, so no
// field was silently dropped on the way in.
func TestStrictDecodeAndValidate(t *testing.T) {
	for f := range dashboardFiles(t) {
		t.Run(f.variant+"/"+f.name, func(t *testing.T) {
			d := decode(t, f.name, f.raw)
			if err := d.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			for _, p := range panels(d) {
				for i, target := range p.Targets {
					if _, ok := target.(*prometheus.Dataquery); !ok {
						t.Errorf("panel %q target %d decoded as %T, not a Prometheus query", *p.Title, i, target)
					}
				}
				if _, isMap := p.Options.(map[string]any); isMap || p.Options == nil {
					t.Errorf("panel %q (%s) options decoded as %T, not the plugin's options type", *p.Title, p.Type, p.Options)
				}
			}
			// The strict decoder turns a row's "panels": [] into nil, which
			// encodes as null; restore the empty list before comparing.
			for _, p := range d.Panels {
				if p.RowPanel != nil && p.RowPanel.Panels == nil {
					p.RowPanel.Panels = []dashboard.Panel{}
				}
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			if err := enc.Encode(d); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), f.raw) {
				t.Errorf("decode and re-encode changed the dashboard:\n%s", firstDiff(f.raw, buf.Bytes()))
			}
		})
	}
}

// firstDiff shows the neighbourhood of the first differing byte.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-200)
	return fmt.Sprintf("want …%s…\ngot  …%s…", a[lo:min(len(a), i+200)], b[lo:min(len(b), i+200)])
}
