package charttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// rendered is what helm template produced, every object decoded strictly into its Go type.
type rendered struct {
	configMaps      []*corev1.ConfigMap
	services        []*corev1.Service
	deployments     []*appsv1.Deployment
	serviceMonitors []*monitoringv1.ServiceMonitor
	podMonitors     []*monitoringv1.PodMonitor
	rules           []*monitoringv1.PrometheusRule
}

// template renders the chart at dir (relative to the repository root) as release "lock-exporter"
// in namespace "monitoring" with the given values file (none when empty).
func template(t *testing.T, dir, valuesFile string) []byte {
	t.Helper()
	args := []string{"template", "lock-exporter", dir, "--namespace", "monitoring"}
	if valuesFile != "" {
		args = append(args, "--values", valuesFile)
	}
	return helm(t, args...)
}

// writeValues writes a values file for one case of the matrix.
func writeValues(t *testing.T, values string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// decode splits a multi-document stream and decodes each object strictly (an unknown field, or a
// field of the wrong type, is an error) into the type of its kind. A kind the chart is not known
// to render is an error too, so a new template cannot escape the strict decoding.
func decode(stream []byte) (*rendered, error) {
	var r rendered
	// Split at the separator lines; a document keeps its final newline, which a block scalar at
	// its end (a dashboard's JSON) needs to keep its own.
	for i, doc := range bytes.Split(stream, []byte("\n---\n")) {
		doc = append(bytes.TrimPrefix(doc, []byte("---\n")), '\n')
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		var obj any
		switch tm.APIVersion + " " + tm.Kind {
		case "v1 ConfigMap":
			o := &corev1.ConfigMap{}
			r.configMaps, obj = append(r.configMaps, o), o
		case "v1 Service":
			o := &corev1.Service{}
			r.services, obj = append(r.services, o), o
		case "apps/v1 Deployment":
			o := &appsv1.Deployment{}
			r.deployments, obj = append(r.deployments, o), o
		case "monitoring.coreos.com/v1 ServiceMonitor":
			o := &monitoringv1.ServiceMonitor{}
			r.serviceMonitors, obj = append(r.serviceMonitors, o), o
		case "monitoring.coreos.com/v1 PodMonitor":
			o := &monitoringv1.PodMonitor{}
			r.podMonitors, obj = append(r.podMonitors, o), o
		case "monitoring.coreos.com/v1 PrometheusRule":
			o := &monitoringv1.PrometheusRule{}
			r.rules, obj = append(r.rules, o), o
		default:
			return nil, fmt.Errorf("document %d: unexpected %s %s", i, tm.APIVersion, tm.Kind)
		}
		if err := decodeStrict(doc, obj); err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i, tm.Kind, err)
		}
	}
	return &r, nil
}

// decodeStrict decodes one YAML document into obj the way the API server receives it: first to
// JSON without knowing obj's type, as kubectl and Helm's client convert a manifest (so an
// unquoted 2024 or true stays a number or a boolean, and a string field refuses it), refusing a
// key given twice in a mapping, then into obj refusing unknown fields. sigs.k8s.io/yaml's
// UnmarshalStrict converts with obj's types in hand and turns such a number into the string the
// field wants, so it passed manifests the API refuses.
func decodeStrict(doc []byte, obj any) error {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	return dec.Decode(obj)
}

// stripComments drops whole-line YAML comments, so a document of comments alone counts as empty.
func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

// renderDecoded is template then decode, failing the test on either.
func renderDecoded(t *testing.T, dir, valuesFile string) *rendered {
	t.Helper()
	r, err := decode(template(t, dir, valuesFile))
	if err != nil {
		t.Fatalf("strict decoding of helm template: %v", err)
	}
	return r
}
