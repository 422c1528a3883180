package rulestest

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestMultiClusterPack renders the pack for multicluster/pack.yml (cluster_labels: [cluster])
// into a temporary directory and runs multicluster/clusters_test.yml against it: two clusters
// with identical job, instance and namespace names keep separate recording-rule series, and each
// exporter alert fires in the cluster it concerns only. The same test file run against the
// default (single-cluster) pack must fail on exactly those points, which proves the file
// exercises the collision rather than passing on any rules.
func TestMultiClusterPack(t *testing.T) {
	root := testkit.RepoRoot(t)
	dir := filepath.Join(root, "rules_test", "multicluster")
	multi, err := packconfig.Load(filepath.Join(dir, "pack.yml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cfg     packconfig.Config
		pass    bool
		mustSay []string // failures promtool must report when pass is false
	}{
		{"cluster_labels set", multi, true, nil},
		{"single-cluster pack", packconfig.Default(), false, []string{
			// the two clusters' operations summed into one series: 2.5/s + 2/s
			`got: {__name__="job_lock_namespace:lock_operations:rate5m", job="app", lock_namespace="scheduler"} 4.5E+00`,
			// us1's incomplete namespace paired with eu1's reachable exporter
			`Labels:{alertname="LockExporterScrapeIncomplete", cluster="us1"`,
			// absent() sees eu1's series and stays silent about us1
			"alertname: LockExporterAbsent, time: 35m",
			// the two clusters' lifecycle counters summed into one alert without a cluster
			"alertname: LockKeyLapseRatioHigh, time: 30m",
			// the two clusters' fenced writes summed into one ratio under the threshold
			"alertname: LockFencedWriteRejectionRatioHigh, time: 30m",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := t.TempDir()
			files, err := rules.Generate(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pack.Write(out, files, io.Discard); err != nil {
				t.Fatal(err)
			}
			test := copyTestFile(t, filepath.Join(dir, "clusters_test.yml"), out)
			got, err := promtool(t, root, "test", "rules", test)
			switch {
			case tt.pass && err != nil:
				t.Fatalf("promtool test rules: %v\n%s", err, got)
			case !tt.pass && err == nil:
				t.Fatal("promtool passed the multi-cluster test against the single-cluster pack")
			}
			for _, s := range tt.mustSay {
				if !strings.Contains(got, s) {
					t.Errorf("promtool output lacks %q:\n%s", s, got)
				}
			}
		})
	}
}

// copyTestFile copies a promtool test file into root/rules_test/, where its rule_files paths
// (../alerts/…) resolve to the rules generated under root.
func copyTestFile(t *testing.T, src, root string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(root, "rules_test", filepath.Base(src))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}
