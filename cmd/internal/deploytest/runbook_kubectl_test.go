package deploytest

import (
	"regexp"
	"testing"
)

// configFileArg is the exporter's --config.file argument in a Deployment or a command line.
var configFileArg = regexp.MustCompile(`--config\.file=(\S+?)[\x60\s]`)

// TestRunbookInspectInThePodFindsTheConfig: the runbook's `kubectl exec … inspect` command names
// the configuration file where each way of deploying the exporter mounts it: the manifests of
// deploy/kubernetes and the Helm chart (README's first way). A path neither mounts makes inspect
// exit 2 with "no such file or directory" in the middle of an incident. (The runbook gave the
// manifests' path only; the chart mounts the file one directory deeper.)
func TestRunbookInspectInThePodFindsTheConfig(t *testing.T) {
	read := func(rel string) string { return readRepoFile(t, rel) }
	mounted := map[string]string{}
	for _, rel := range []string{"deploy/kubernetes/lock-exporter.yaml", "deploy/helm/lock-exporter/templates/deployment.yaml"} {
		m := configFileArg.FindStringSubmatch(read(rel))
		if m == nil {
			t.Fatalf("%s: no --config.file argument", rel)
		}
		mounted[m[1]] = rel
	}
	inRunbook := map[string]bool{}
	for _, line := range regexp.MustCompile("(?m)`kubectl [^`]*\\bexec [^`]*`").FindAllString(read("docs/runbook.md"), -1) {
		for _, m := range configFileArg.FindAllStringSubmatch(line, -1) {
			inRunbook[m[1]] = true
			if mounted[m[1]] == "" {
				t.Errorf("docs/runbook.md: %s: no deployment mounts %s", line, m[1])
			}
		}
	}
	for path, rel := range mounted {
		if !inRunbook[path] {
			t.Errorf("docs/runbook.md: no kubectl exec command reads %s, where %s mounts the configuration", path, rel)
		}
	}
}
