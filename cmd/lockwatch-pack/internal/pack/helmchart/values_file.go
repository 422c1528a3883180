package helmchart

import (
	"bytes"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/exporterfile"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// ValuesPath is the chart's values file for the locks the pack configuration describes, beside
// the chart: `helm install lock-exporter deploy/helm/lock-exporter -f deploy/helm/lock-exporter-values.yaml`.
const ValuesPath = "deploy/helm/lock-exporter-values.yaml"

// passwordVolume is the volume of the chart's own existingSecret mount, which the generated
// values use for the Redis password; the other Secrets go through extraVolumes.
const passwordVolume = "redis-password"

// valuesFile renders the values of the locks cfg describes: the exporter's redis: and
// namespaces: sections as exporterfile writes them, the password Secret as the chart's
// existingSecret, and the other Secrets as extra volumes at the paths the file names.
func valuesFile(cfg packconfig.Config) (pack.File, error) {
	redis, err := chartRedis(cfg.Redis)
	if err != nil {
		return pack.File{}, err
	}
	namespaces, err := exporterfile.EncodeSet(exporterfile.Config(cfg).Namespaces)
	if err != nil {
		return pack.File{}, err
	}
	doc := mapping("redis", redis, "namespaces", namespaces)
	var volumes, mounts []any
	for _, m := range cfg.Redis.SecretMounts() {
		if m.Volume == passwordVolume {
			continue
		}
		volumes = append(volumes, secretVolume(m))
		mounts = append(mounts, map[string]any{"name": m.Volume, "mountPath": m.Dir, "readOnly": true})
	}
	if len(volumes) > 0 {
		doc.Content = append(doc.Content, scalar("extraVolumes"), encode(volumes), scalar("extraVolumeMounts"), encode(mounts))
	}
	var b bytes.Buffer
	b.WriteString(pack.HashNotice())
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return pack.File{}, fmt.Errorf("helmchart: values: %w", err)
	}
	if err := enc.Close(); err != nil {
		return pack.File{}, err
	}
	return pack.File{Path: ValuesPath, Data: b.Bytes()}, nil
}

// chartRedis is the chart's redis: values: the exporter's section, with the password Secret as
// existingSecret (which the chart mounts where the exporter's password_file points), and the
// chart's default addr emptied where the addresses are a Cluster's or Sentinels'.
func chartRedis(r packconfig.Redis) (*yaml.Node, error) {
	section := r.Exporter()
	if r.Password.Secret.Name != "" {
		section.PasswordFile = "" // the chart sets it for existingSecret
	}
	n, err := exporterfile.EncodeSet(section)
	if err != nil {
		return nil, err
	}
	if section.Addr == "" {
		n.Content = append([]*yaml.Node{scalar("addr"), scalar("")}, n.Content...)
	}
	if s := r.Password.Secret; s.Name != "" {
		n.Content = append(n.Content, scalar("existingSecret"), scalar(s.Name),
			scalar("existingSecretPasswordKey"), scalar(s.SecretKey()))
	}
	return n, nil
}

// secretVolume is the pod volume of a Secret mount.
func secretVolume(m packconfig.SecretMount) map[string]any {
	secret := map[string]any{"secretName": m.Secret}
	if m.Key != "" {
		secret["items"] = []any{map[string]any{"key": m.Key, "path": "password"}}
	}
	return map[string]any{"name": m.Volume, "secret": secret}
}

func scalar(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func encode(v any) *yaml.Node {
	var n yaml.Node
	_ = n.Encode(v) // maps and lists of strings and bools always encode
	return &n
}

// mapping builds a mapping node from alternating keys and value nodes.
func mapping(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Content = append(n.Content, scalar(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return n
}
