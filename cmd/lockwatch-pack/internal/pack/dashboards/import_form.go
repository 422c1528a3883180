package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"slices"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// ImportDir holds the dashboards in grafana.com's import form. It is beside Dir, not inside it:
// Grafana's file provisioning walks subdirectories too, and would load each dashboard twice
// under one uid.
const ImportDir = "dashboards-import"

// The import form's datasource input: Grafana's import dialog asks for a Prometheus datasource
// for it and substitutes its uid wherever ${DS_PROMETHEUS} appears.
const (
	importInput = "DS_PROMETHEUS"
	// provisioningRef is how the provisioning form refers to its datasource: through its own
	// "datasource" variable, which a provisioned dashboard resolves by itself.
	provisioningRef = "${datasource}"
	datasourceVar   = "datasource"
	// minGrafana is the oldest Grafana the dashboards are checked against (docs/dashboards.md).
	minGrafana = "10.4.0"
)

// GenerateImport is the import form's pack.Generator: every dashboard of Generate, rewritten
// for Grafana's "Import dashboard" (grafana.com's format): a DS_PROMETHEUS datasource input in
// __inputs, what it needs in __requires, and every reference to the datasource variable made a
// reference to the input, the variable itself dropped.
func GenerateImport(cfg packconfig.Config) ([]pack.File, error) {
	boards, err := Generate(cfg)
	if err != nil {
		return nil, err
	}
	files := make([]pack.File, 0, len(boards))
	for _, b := range boards {
		data, err := ImportForm(b.Data)
		if err != nil {
			return nil, fmt.Errorf("dashboard %s: %w", b.Path, err)
		}
		files = append(files, pack.File{Path: ImportDir + "/" + path.Base(b.Path), Data: data})
	}
	return files, nil
}

// ImportForm rewrites one provisioning-form dashboard into the import form.
func ImportForm(provisioning []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(provisioning))
	dec.UseNumber() // numbers pass through as written
	var board map[string]any
	if err := dec.Decode(&board); err != nil {
		return nil, err
	}
	templating, _ := board["templating"].(map[string]any)
	vars, _ := templating["list"].([]any)
	kept := slices.DeleteFunc(slices.Clone(vars), func(v any) bool {
		m, _ := v.(map[string]any)
		return m["name"] == datasourceVar && m["type"] == "datasource"
	})
	if len(kept) != len(vars)-1 {
		return nil, fmt.Errorf("no %q datasource variable to replace", datasourceVar)
	}
	templating["list"] = kept
	replaced := replaceRef(board)
	if replaced == 0 {
		return nil, fmt.Errorf("no reference to %s", provisioningRef)
	}
	board["__inputs"] = []any{map[string]any{
		"name":        importInput,
		"label":       "Prometheus",
		"description": "The Prometheus that scrapes lock-exporter and the applications using the lease library",
		"type":        "datasource",
		"pluginId":    "prometheus",
		"pluginName":  "Prometheus",
	}}
	requires := []any{
		map[string]any{"type": "grafana", "id": "grafana", "name": "Grafana", "version": minGrafana},
		map[string]any{"type": "datasource", "id": "prometheus", "name": "Prometheus", "version": "1.0.0"},
	}
	for _, p := range panelTypes(board) {
		requires = append(requires, map[string]any{"type": "panel", "id": p, "name": p, "version": ""})
	}
	board["__requires"] = requires

	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false) // as the provisioning form: queries keep their < and >
	enc.SetIndent("", "  ")
	if err := enc.Encode(board); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// replaceRef turns every "${datasource}" string in v into "${DS_PROMETHEUS}" and counts them.
func replaceRef(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == provisioningRef {
				x[k] = "${" + importInput + "}"
				n++
				continue
			}
			n += replaceRef(e)
		}
	case []any:
		for i, e := range x {
			if e == provisioningRef {
				x[i] = "${" + importInput + "}"
				n++
				continue
			}
			n += replaceRef(e)
		}
	}
	return n
}

// panelTypes lists the panel plugins the dashboard uses (rows are not plugins), sorted.
func panelTypes(board map[string]any) []string {
	var types []string
	var walk func(panels any)
	walk = func(panels any) {
		list, _ := panels.([]any)
		for _, p := range list {
			m, _ := p.(map[string]any)
			if t, ok := m["type"].(string); ok && t != "row" && !slices.Contains(types, t) {
				types = append(types, t)
			}
			walk(m["panels"])
		}
	}
	walk(board["panels"])
	slices.Sort(types)
	return types
}
