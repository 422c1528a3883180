package rules

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/promql/parser"
	"gopkg.in/yaml.v3"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
)

// header opens every generated file. It is the same with and without overrides, so the output
// depends on the configuration values only.
var header = pack.HashNotice()

// Render renders rule files as pack files under Dir.
func Render(files []RuleFile) ([]pack.File, error) {
	var out []pack.File
	for _, f := range files {
		data, err := renderFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		out = append(out, pack.File{Path: Dir + "/" + f.Name, Data: data})
	}
	return out, nil
}

// renderFile writes a rule file in the Prometheus rule-file format. Keys come in a fixed order and
// expressions are pretty-printed by the PromQL parser, so equal input gives equal bytes.
func renderFile(f RuleFile) ([]byte, error) {
	groups := seq()
	for _, g := range f.Groups {
		rules := seq()
		for _, r := range g.Rules {
			rules.Content = append(rules.Content, ruleNode(r))
		}
		groups.Content = append(groups.Content, mapping("name", str(g.Name), "rules", rules))
	}
	var buf bytes.Buffer
	buf.WriteString(header)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(mapping("groups", groups)); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func ruleNode(r Rule) *yaml.Node {
	var kv []any
	if r.Record != "" {
		kv = append(kv, "record", str(r.Record))
	} else {
		kv = append(kv, "alert", str(r.Alert))
	}
	kv = append(kv, "expr", exprNode(r.Expr))
	if r.For > 0 {
		kv = append(kv, "for", str(r.For.String()))
	}
	if len(r.Labels) > 0 {
		var lkv []any
		for _, k := range slices.Sorted(maps.Keys(r.Labels)) {
			lkv = append(lkv, k, str(r.Labels[k]))
		}
		kv = append(kv, "labels", mapping(lkv...))
	}
	if r.Alert != "" {
		kv = append(kv, "annotations", mapping(
			"summary", str(r.Annotations.Summary),
			"description", str(r.Annotations.Description),
			"runbook_url", str(r.Annotations.RunbookURL),
		))
	}
	return mapping(kv...)
}

// exprNode writes a pretty-printed expression; multi-line ones as a literal block so the
// indentation the prettifier chose survives.
func exprNode(e parser.Expr) *yaml.Node {
	s := parser.Prettify(e)
	n := str(s)
	if strings.Contains(s, "\n") {
		n.Style = yaml.LiteralStyle
	}
	return n
}

func seq() *yaml.Node { return &yaml.Node{Kind: yaml.SequenceNode} }

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// mapping builds a mapping node from alternating keys (string) and values (*yaml.Node).
func mapping(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i < len(kv); i += 2 {
		n.Content = append(n.Content, str(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return n
}
