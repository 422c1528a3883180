package demo

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
)

// TestExporterConfigRoundTrips checks the demo's exporter configuration: valid, one namespace
// per demo namespace with its declared TTL, renew interval, maximum hold and types, the
// reconciler (never released) declared to end by expiry, and unchanged when written as a
// YAML file and loaded the way lock-exporter --config.file loads it (the end-to-end test runs
// the exporter binary so).
func TestExporterConfigRoundTrips(t *testing.T) {
	cfg, err := ExporterConfig("127.0.0.1:6379", Namespaces(DefaultPrefix))
	if err != nil {
		t.Fatal(err)
	}
	var want []exporterconfig.Namespace
	for _, ns := range Namespaces(DefaultPrefix) {
		want = append(want, exporterconfig.Namespace{
			Name: ns.Name, Pattern: ns.Pattern,
			ExpectedTTL:           exporterconfig.Duration(ns.TTL),
			ExpectedRenewInterval: exporterconfig.Duration(ns.RenewInterval),
			ExpectedMaxHold:       exporterconfig.Duration(ns.MaxHold),
			Types:                 ns.Types,
			EndsByExpiry:          ns.Name == "reconciler",
		})
	}
	if !reflect.DeepEqual(cfg.Namespaces, want) {
		t.Errorf("namespaces = %+v, want %+v", cfg.Namespaces, want)
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "exporter.yml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := exporterconfig.Load(path)
	if err != nil {
		t.Fatalf("written config does not load: %v\n%s", err, data)
	}
	// Compared as YAML: loading turns the unset lists into empty ones.
	again, err := yaml.Marshal(loaded)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Errorf("loaded config differs from the one written:\n%s\nwant\n%s", again, data)
	}
}

func TestNamespacePoliciesMatchWhatTheExporterIsTold(t *testing.T) {
	for _, ns := range leaseNamespaces(DefaultPrefix) {
		if ns.policy.TTL != ns.TTL {
			t.Errorf("%s: policy TTL %v, declared %v", ns.Name, ns.policy.TTL, ns.TTL)
		}
		renews := !ns.policy.DisableRenewal && ns.policy.RenewInterval > 0
		if renews && ns.policy.RenewInterval != ns.RenewInterval {
			t.Errorf("%s: policy renews every %v, declared %v", ns.Name, ns.policy.RenewInterval, ns.RenewInterval)
		}
		if ns.policy.ReleaseMode == 0 && !ns.policy.DisableRenewal && ns.RenewInterval == 0 {
			t.Errorf("%s: renewed namespace declares no renew interval", ns.Name)
		}
	}
}
