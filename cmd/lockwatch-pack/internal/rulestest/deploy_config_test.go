package rulestest

import (
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

func TestPromtoolCheckConfig(t *testing.T) {
	out := testkit.RunTool(t, "promtool", "check", "config", "deploy/prometheus/prometheus.yml")
	// promtool checks the rule files the config names too: both must be found.
	for _, f := range []string{rules.RecordingFile, rules.AlertingFile} {
		if !strings.Contains(out, f) {
			t.Errorf("promtool did not check %s:\n%s", f, out)
		}
	}
}

// TestAlertRoutes asks amtool where each generated alert goes, with the labels it carries.
func TestAlertRoutes(t *testing.T) {
	receiverFor := map[string]string{"critical": "lockwatch-page", "warning": "lockwatch-ticket", "info": "lockwatch-info"}
	files, err := rules.Build(packconfig.Default())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r := range rules.All(files) {
		if r.Alert == "" {
			continue
		}
		n++
		want, ok := receiverFor[r.Labels["severity"]]
		if !ok {
			t.Errorf("%s has severity %q", r.Alert, r.Labels["severity"])
			continue
		}
		labels := []string{"alertname=" + r.Alert, "lock_namespace=scheduler", "job=workers"}
		for k, v := range r.Labels {
			labels = append(labels, k+"="+v)
		}
		args := append([]string{"config", "routes", "test", "--config.file=deploy/alertmanager/alertmanager.yml", "--verify.receivers=" + want}, labels...)
		testkit.RunTool(t, "amtool", args...)
	}
	if n < 7 {
		t.Errorf("only %d alerts routed", n)
	}
}
