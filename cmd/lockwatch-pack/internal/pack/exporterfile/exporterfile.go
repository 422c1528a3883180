// Package exporterfile writes lock-exporter's configuration file (its --config.file format) for
// the locks the pack configuration describes: their Redis and their namespaces. The chart's
// values and the Kubernetes manifests embed the same file, so the three cannot disagree.
package exporterfile

import (
	"bytes"
	"fmt"
	"reflect"

	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/cmd/internal/strictyaml"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// Path is where the file is written, relative to the pack's root.
const Path = "deploy/lock-exporter/lock-exporter.yml"

// Generate is the file's pack.Generator: nothing when cfg describes no locks.
func Generate(cfg packconfig.Config) ([]pack.File, error) {
	if !cfg.DescribesLocks() {
		return nil, nil
	}
	data, err := YAML(cfg)
	if err != nil {
		return nil, err
	}
	return []pack.File{{Path: Path, Data: append([]byte(pack.HashNotice()), data...)}}, nil
}

// Config is the exporter configuration of cfg's locks. The scan settings are the exporter's
// defaults, which its flags or an edited copy of the file can change.
func Config(cfg packconfig.Config) exporterconfig.Config {
	return exporterconfig.Config{Redis: cfg.Redis.Exporter(), Namespaces: cfg.Namespaces}
}

// YAML renders Config(cfg) with every setting at its zero value left out: in the redis: and
// namespaces: sections zero is the exporter's default, so the file says only what was chosen.
func YAML(cfg packconfig.Config) ([]byte, error) {
	n, err := EncodeSet(Config(cfg))
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, fmt.Errorf("exporterfile: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// EncodeSet encodes v as a YAML node without the struct fields that hold their zero value.
func EncodeSet(v any) (*yaml.Node, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, fmt.Errorf("exporterfile: %w", err)
	}
	dropZero(&n, reflect.ValueOf(v))
	return &n, nil
}

// dropZero removes from mapping n the keys whose field of v is zero, down the tree.
func dropZero(n *yaml.Node, v reflect.Value) {
	switch {
	case v.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		fields := strictyaml.Fields(v.Type())
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			fv, ok := fieldValue(v, fields, n.Content[i].Value)
			if ok && fv.IsZero() {
				continue
			}
			if ok {
				dropZero(n.Content[i+1], fv)
			}
			kept = append(kept, n.Content[i], n.Content[i+1])
		}
		n.Content = kept
	case v.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, item := range n.Content {
			dropZero(item, v.Index(i))
		}
	}
}

func fieldValue(v reflect.Value, fields []strictyaml.Field, key string) (reflect.Value, bool) {
	for _, f := range fields {
		if f.Key == key {
			return v.FieldByIndex(f.Index), true
		}
	}
	return reflect.Value{}, false
}
