package manifests

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/exporterfile"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// exporterManifest is the static lock-exporter.yaml (the ConfigMap, Deployment and Service)
// for the locks cfg describes: the ConfigMap holds exporterfile's configuration instead of the
// example, and the Deployment mounts the Secrets that configuration names instead of reading an
// optional password from the environment. Each part replaced must be found, so an edit of the
// static file that moves one fails the generator (and its test) rather than writing a
// half-changed manifest.
func exporterManifest(static []byte, cfg packconfig.Config) ([]byte, error) {
	config, err := exporterfile.YAML(cfg)
	if err != nil {
		return nil, err
	}
	text := string(static)
	for _, r := range []struct{ name, from, to, with string }{
		{"the header", "# lock-exporter on Kubernetes", "docs/deploy.md).\n", describedHeader},
		{"the ConfigMap's data", "\ndata:\n", "\n---\n", "\ndata:\n" + configMapData(config) + "---\n"},
		{"the password from the environment", "            # The password comes from a Secret", "optional: true\n", ""},
		{"the volumes", "          volumeMounts:\n", "            name: lock-exporter\n", volumesText(cfg.Redis.SecretMounts())},
		{"the configuration's path", "--config.file=/etc/lock-exporter/lock-exporter.yml", "\n", "--config.file=" + configDir + "/lock-exporter.yml\n"},
	} {
		if text, err = replaceSpan(text, r.from, r.to, r.with); err != nil {
			return nil, fmt.Errorf("manifests: %s: %w", r.name, err)
		}
	}
	return []byte(text), nil
}

// describedHeader opens the manifest written for described locks: its configuration is changed
// through the pack configuration, not an overlay.
const describedHeader = `# lock-exporter on Kubernetes for the locks of the pack configuration: its configuration (from
# the pack configuration's namespaces and redis; change them there and rerun lockwatch-pack), the
# Deployment and the Service the ServiceMonitor selects.
`

// configDir is where the ConfigMap is mounted beside the Secrets: a directory of its own, as a
// Secret mounted inside a ConfigMap's volume would need a mount point in a read-only volume.
const configDir = "/etc/lock-exporter/config"

// replaceSpan replaces the first span of text that starts with from and ends with to.
func replaceSpan(text, from, to, with string) (string, error) {
	start := strings.Index(text, from)
	if start < 0 {
		return "", fmt.Errorf("%q not found", from)
	}
	end := strings.Index(text[start:], to)
	if end < 0 {
		return "", fmt.Errorf("%q not found after %q", to, from)
	}
	return text[:start] + with + text[start+end+len(to):], nil
}

// configMapData is the ConfigMap's data: the configuration file as a block scalar.
func configMapData(config []byte) string {
	var b strings.Builder
	b.WriteString("  # The lock-exporter configuration file, written by lockwatch-pack from the pack\n")
	b.WriteString("  # configuration's namespaces and redis.\n")
	b.WriteString("  lock-exporter.yml: |\n")
	for _, line := range strings.SplitAfter(strings.TrimRight(string(config), "\n"), "\n") {
		b.WriteString("    " + line)
	}
	b.WriteString("\n")
	return b.String()
}

// volumesText is the container's volumeMounts and the pod's volumes: the configuration and
// every Secret the Redis settings name. Secret names and keys are validated Kubernetes names,
// which need no quoting.
func volumesText(mounts []packconfig.SecretMount) string {
	var m, v bytes.Buffer
	m.WriteString("          volumeMounts:\n            - name: config\n              mountPath: " + configDir + "\n              readOnly: true\n")
	v.WriteString("      volumes:\n        - name: config\n          configMap:\n            name: lock-exporter\n")
	for _, s := range mounts {
		fmt.Fprintf(&m, "            - name: %s\n              mountPath: %s\n              readOnly: true\n", s.Volume, s.Dir)
		// A file, re-read for every new connection: a rotated Secret needs no restart.
		fmt.Fprintf(&v, "        - name: %s\n          secret:\n            secretName: %s\n", s.Volume, s.Secret)
		if s.Key != "" {
			fmt.Fprintf(&v, "            items:\n              - key: %s\n                path: password\n", s.Key)
		}
	}
	return m.String() + v.String()
}
