package rules

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/template"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// TestDescriptionsNeverRenderAnEmptyLabel expands every alert's description with Prometheus's
// own template engine, for an alert carrying the cluster labels and for one without them (the
// absent() arm of LockExporterAbsent, or series of a target that lacks the label): a label the
// alert does not carry is left out of the sentence, never rendered as an empty value
// ("In cluster .").
func TestDescriptionsNeverRenderAnEmptyLabel(t *testing.T) {
	cfg := packconfig.Default()
	cfg.ClusterLabels = []string{"cluster", "region"}
	files, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"job": "app", "instance": "app-1:8080", "lock_namespace": "scheduler"}
	tests := []struct {
		name   string
		labels map[string]string
		want   string // in every description
	}{
		{"with both cluster labels", with(base, "cluster", "eu1", "region", "west"), " In cluster eu1, region west."},
		{"with one", with(base, "region", "west"), " In region west."},
		{"without them", base, ""},
	}
	empty := regexp.MustCompile(`\b(cluster|region)\s*[,.)]|\bIn\s*\.`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for r := range All(files) {
				if r.Alert == "" {
					continue
				}
				got := expand(t, r.Annotations.Description, tt.labels)
				if m := empty.FindString(got); m != "" {
					t.Errorf("%s renders an empty label (%q): %s", r.Alert, m, got)
				}
				if !strings.Contains(got, tt.want) {
					t.Errorf("%s does not say %q: %s", r.Alert, tt.want, got)
				}
			}
		})
	}
}

func with(m map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// expand renders an annotation as Prometheus does for a firing alert.
func expand(t *testing.T, text string, lbls map[string]string) string {
	t.Helper()
	defs := "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$externalURL := .ExternalURL}}{{$value := .Value}}"
	data := template.AlertTemplateData(lbls, nil, "", promql.Sample{Metric: labels.FromMap(lbls), F: 2})
	out, err := template.NewTemplateExpander(context.Background(), defs+text, "description", data, 0, nil, &url.URL{}, nil).Expand()
	if err != nil {
		t.Fatal(err)
	}
	return out
}
