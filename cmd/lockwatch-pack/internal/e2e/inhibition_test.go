package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// TestLapseIncidentPagesOnce runs Alertmanager (Debian's, as make e2e does) with the inhibit
// rules of deploy/alertmanager and posts the alerts one lapse incident raises: in "scheduler",
// a Go namespace, the library's LockNotOwnedRatioHigh and the exporter's lapse and takeover
// alerts; in "redispy", which no library reports on, the exporter's two alone. Only the
// library's alert may reach a receiver for "scheduler"; "redispy" pages with its lapse alert,
// its takeover alert held back by it. Alertmanager's own status of each alert says which
// alert holds which back, so no step waits for a notification that must not come.
func TestLapseIncidentPagesOnce(t *testing.T) {
	amURL, recv := startInhibitingAlertmanager(t)

	library := map[string]string{"job": "app", "lock_namespace": "scheduler", "severity": "critical"}
	exporter := func(namespace string) map[string]string {
		return map[string]string{"job": "lock-exporter", "instance": "exporter-a:9360", "lock_namespace": namespace, "severity": "warning"}
	}
	since := time.Now()
	postAlert(t, amURL, rules.AlertNotOwnedRatioHigh, library)
	for _, ns := range []string{"scheduler", "redispy"} {
		postAlert(t, amURL, rules.AlertKeyLapseRatioHigh, exporter(ns))
		postAlert(t, amURL, rules.AlertKeyTakeoverRatioHigh, exporter(ns))
	}

	tests := []struct {
		alert, namespace string
		inhibited        bool
	}{
		{rules.AlertNotOwnedRatioHigh, "scheduler", false},
		{rules.AlertKeyLapseRatioHigh, "scheduler", true},
		{rules.AlertKeyTakeoverRatioHigh, "scheduler", true},
		{rules.AlertKeyLapseRatioHigh, "redispy", false},
		{rules.AlertKeyTakeoverRatioHigh, "redispy", true},
	}
	for _, tt := range tests {
		got := waitAlertStatus(t, amURL, tt.alert, tt.namespace)
		if inhibited := len(got.InhibitedBy) > 0; inhibited != tt.inhibited {
			t.Errorf("%s in %s: state %s, inhibited by %d alert(s); want inhibited %v",
				tt.alert, tt.namespace, got.State, len(got.InhibitedBy), tt.inhibited)
		}
	}
	// The alerts that are not held back reach their routes: the library's critical pages, the
	// exporter's warning opens a ticket.
	for _, want := range []struct{ alert, namespace, path string }{
		{rules.AlertNotOwnedRatioHigh, "scheduler", "/page"},
		{rules.AlertKeyLapseRatioHigh, "redispy", "/ticket"},
	} {
		e := waitDelivered(t, recv, since, want.alert, want.namespace)
		if e.Path != want.path {
			t.Errorf("%s in %s reached %s, want %s", want.alert, want.namespace, e.Path, want.path)
		}
	}
}

// TestFencedRejectionsPageOnce posts the alerts of stale holders whose fenced writes were
// rejected: in "ledger" of job "app", LockNotOwnedRatioHigh (the same lapses seen from the
// renewals) and LockFencedWriteRejectionRatioHigh, which it must hold back; the fenced-write
// alert of another job's "ledger" and of app's "nightly", where no not-owned alert fires, must
// not be held back, and the latter opens a ticket.
func TestFencedRejectionsPageOnce(t *testing.T) {
	amURL, recv := startInhibitingAlertmanager(t)
	labels := func(job, namespace, severity string) map[string]string {
		return map[string]string{"job": job, "lock_namespace": namespace, "severity": severity}
	}
	since := time.Now()
	postAlert(t, amURL, rules.AlertNotOwnedRatioHigh, labels("app", "ledger", "critical"))
	postAlert(t, amURL, rules.AlertFencedWriteRejectionRatioHigh, labels("app", "ledger", "warning"))
	postAlert(t, amURL, rules.AlertFencedWriteRejectionRatioHigh, labels("billing", "ledger", "warning"))
	postAlert(t, amURL, rules.AlertFencedWriteRejectionRatioHigh, labels("app", "nightly", "warning"))

	tests := []struct {
		job, namespace string
		inhibited      bool
	}{
		{"app", "ledger", true},
		{"billing", "ledger", false},
		{"app", "nightly", false},
	}
	for _, tt := range tests {
		got := waitAlertStatusOf(t, amURL, rules.AlertFencedWriteRejectionRatioHigh,
			map[string]string{"job": tt.job, "lock_namespace": tt.namespace})
		if inhibited := len(got.InhibitedBy) > 0; inhibited != tt.inhibited {
			t.Errorf("%s of job %s in %s: state %s, inhibited by %d alert(s); want inhibited %v",
				rules.AlertFencedWriteRejectionRatioHigh, tt.job, tt.namespace, got.State, len(got.InhibitedBy), tt.inhibited)
		}
	}
	if e := waitDelivered(t, recv, since, rules.AlertFencedWriteRejectionRatioHigh, "nightly"); e.Path != "/ticket" {
		t.Errorf("%s in nightly reached %s, want /ticket", rules.AlertFencedWriteRejectionRatioHigh, e.Path)
	}
}

// startInhibitingAlertmanager runs Alertmanager (Debian's, as make e2e does) with the routes and
// inhibit rules of deploy/alertmanager, its receivers pointed at a test receiver.
func startInhibitingAlertmanager(t *testing.T) (amURL string, recv *receiver) {
	t.Helper()
	if _, err := os.Stat(alertmanagerBin); err != nil {
		t.Fatalf("Alertmanager binary missing (%v): apt-get install prometheus-alertmanager (.ci/run does)", err)
	}
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	root, work := testkit.RepoRoot(t), t.TempDir()
	recv = startReceiver(t)
	amAddr := testkit.UnusedAddr(t)
	amCfg := writeFile(t, work, "alertmanager.yml", alertmanagerConfig(t, root, recv.addr))
	am := startProcess(t, "alertmanager", alertmanagerBin, "--config.file="+amCfg, "--storage.path="+filepath.Join(work, "am"),
		"--web.listen-address="+amAddr, "--cluster.listen-address=")
	am.waitReady(t, "http://"+amAddr+"/-/ready")
	return "http://" + amAddr, recv
}

// postAlert posts one firing alert to Alertmanager's API.
func postAlert(t *testing.T, amURL, name string, labels map[string]string) {
	t.Helper()
	all := map[string]string{"alertname": name}
	for k, v := range labels {
		all[k] = v
	}
	body, err := json.Marshal([]map[string]any{{
		"labels":      all,
		"annotations": map[string]string{"summary": "posted by the e2e test"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(amURL+"/api/v2/alerts", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("post alert %s: %s", name, resp.Status)
	}
}

// alertStatus is the part of an alert's status in Alertmanager's API this test reads.
type alertStatus struct {
	State       string   `json:"state"`
	InhibitedBy []string `json:"inhibitedBy"`
}

// waitAlertStatus returns the status Alertmanager gives the named alert of namespace, once it
// has the alert (an alert posted is listed after Alertmanager has stored it).
func waitAlertStatus(t *testing.T, amURL, name, namespace string) alertStatus {
	t.Helper()
	return waitAlertStatusOf(t, amURL, name, map[string]string{"lock_namespace": namespace})
}

// waitAlertStatusOf returns the status Alertmanager gives the one alert of that name whose labels
// include match.
func waitAlertStatusOf(t *testing.T, amURL, name string, match map[string]string) alertStatus {
	t.Helper()
	query := url.Values{"filter": {`alertname="` + name + `"`}}
	for k, v := range match {
		query.Add("filter", k+`="`+v+`"`)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		body, err := getBody(amURL + "/api/v2/alerts?" + query.Encode())
		if err != nil {
			t.Fatal(err)
		}
		var alerts []struct {
			Status alertStatus `json:"status"`
		}
		if err := json.Unmarshal([]byte(body), &alerts); err != nil {
			t.Fatalf("alerts of Alertmanager's API: %v\n%s", err, body)
		}
		if len(alerts) == 1 {
			return alerts[0].Status
		}
		if time.Now().After(deadline) {
			t.Fatalf("Alertmanager lists %d %s alerts of %v after 30s, want 1:\n%s", len(alerts), name, match, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitDelivered returns the firing notification of alert in namespace once the receiver has it.
func waitDelivered(t *testing.T, recv *receiver, since time.Time, alert, namespace string) event {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if e, ok := recv.find(since, alert, "firing", map[string]string{"lock_namespace": namespace}); ok {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s of %s not delivered within 30s:\n%s", alert, namespace, recv.summary())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
