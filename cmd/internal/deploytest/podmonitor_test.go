package deploytest

import "testing"

// TestPodMonitorSelectsWorkersInEveryNamespace: monitors.yaml's PodMonitor is applied in the
// monitoring namespace (`kubectl apply -k deploy/kubernetes -n monitoring`), and a PodMonitor
// without a namespaceSelector selects pods of its own namespace alone. Workers run in their own
// namespaces, so "label your worker pods" scraped nothing and no library alert could fire.
// They opt in by label, so it selects them in any namespace.
func TestPodMonitorSelectsWorkersInEveryNamespace(t *testing.T) {
	pm := kubeObject(t, "monitors.yaml", "PodMonitor")
	if get(pm, "spec", "namespaceSelector", "any") != true {
		t.Errorf("PodMonitor namespaceSelector %v: want any: true", get(pm, "spec", "namespaceSelector"))
	}
}
