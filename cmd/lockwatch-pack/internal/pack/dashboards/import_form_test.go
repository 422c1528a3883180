package dashboards

import (
	"bytes"
	"encoding/json"
	"path"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// TestImportForm checks the grafana.com import form of every dashboard: one DS_PROMETHEUS
// datasource input, __requires naming Grafana, Prometheus and every panel plugin used, no
// reference to the provisioning form's datasource variable left, and apart from that exactly
// the provisioning form (turning the references back gives its content, less the variable).
func TestImportForm(t *testing.T) {
	boards, err := Generate(packconfig.Default())
	if err != nil {
		t.Fatal(err)
	}
	imports, err := GenerateImport(packconfig.Default())
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) != len(boards) {
		t.Fatalf("%d import forms for %d dashboards", len(imports), len(boards))
	}
	for i, imp := range imports {
		t.Run(path.Base(imp.Path), func(t *testing.T) {
			if imp.Path != ImportDir+"/"+path.Base(boards[i].Path) {
				t.Errorf("import form at %s, want %s/ beside %s", imp.Path, ImportDir, boards[i].Path)
			}
			text := string(imp.Data)
			if strings.Contains(text, provisioningRef) {
				t.Error("the import form still refers to ${datasource}")
			}
			var board struct {
				Inputs []struct {
					Name, Type, PluginID string
				} `json:"__inputs"`
				Requires []struct{ Type, ID string } `json:"__requires"`
				Panels   []struct{ Type string }     `json:"panels"`
			}
			if err := json.Unmarshal(imp.Data, &board); err != nil {
				t.Fatal(err)
			}
			if len(board.Inputs) != 1 || board.Inputs[0].Name != "DS_PROMETHEUS" || board.Inputs[0].Type != "datasource" || board.Inputs[0].PluginID != "prometheus" {
				t.Errorf("__inputs = %+v, want one prometheus datasource input DS_PROMETHEUS", board.Inputs)
			}
			required := map[string]bool{}
			for _, r := range board.Requires {
				required[r.Type+"/"+r.ID] = true
			}
			for _, want := range []string{"grafana/grafana", "datasource/prometheus"} {
				if !required[want] {
					t.Errorf("__requires lacks %s", want)
				}
			}
			for _, p := range board.Panels {
				if p.Type != "row" && !required["panel/"+p.Type] {
					t.Errorf("__requires lacks the panel plugin %s", p.Type)
				}
			}

			// Back to the provisioning form: the same document but for the variable.
			var back, want map[string]any
			if err := json.Unmarshal([]byte(strings.ReplaceAll(text, "${DS_PROMETHEUS}", provisioningRef)), &back); err != nil {
				t.Fatal(err)
			}
			delete(back, "__inputs")
			delete(back, "__requires")
			if err := json.Unmarshal(boards[i].Data, &want); err != nil {
				t.Fatal(err)
			}
			tpl := want["templating"].(map[string]any)
			var vars []any
			for _, v := range tpl["list"].([]any) {
				if v.(map[string]any)["name"] != datasourceVar {
					vars = append(vars, v)
				}
			}
			tpl["list"] = vars
			b1, _ := json.Marshal(back)
			b2, _ := json.Marshal(want)
			if !bytes.Equal(b1, b2) {
				t.Error("the import form differs from the provisioning form beyond the datasource")
			}
		})
	}
}

func TestImportFormRefusesADashboardWithoutTheVariable(t *testing.T) {
	if _, err := ImportForm([]byte(`{"templating": {"list": []}, "panels": []}`)); err == nil {
		t.Error("ImportForm accepted a dashboard without a datasource variable")
	}
}
