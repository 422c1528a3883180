package rules

import (
	"iter"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
)

// Dir is the directory of a lockwatch checkout that holds the rule files.
const Dir = "alerts"

// File names of the generated rule files inside Dir.
const (
	RecordingFile = "lockwatch-recording.yml"
	AlertingFile  = "lockwatch-alerts.yml"
)

// RuleFile is one generated Prometheus rule file, before it is rendered.
type RuleFile struct {
	Name   string // file name inside Dir
	Groups []Group
}

// Group is a Prometheus rule group.
type Group struct {
	Name  string
	Rules []Rule
}

// Rule is a recording rule (Record set) or an alerting rule (Alert set).
type Rule struct {
	Record      string
	Alert       string
	Expr        parser.Expr
	For         model.Duration
	Labels      map[string]string
	Annotations Annotations
}

// Annotations are the annotations every alert carries, in the order they are written.
type Annotations struct {
	Summary     string // static sentence ending in a period
	Description string // Go template naming the namespace (or instance) and the value
	RunbookURL  string
}

// All yields every rule of files, in file, group and rule order, as a pointer into its group so
// a test can weaken one rule in place before rendering.
func All(files []RuleFile) iter.Seq[*Rule] {
	return func(yield func(*Rule) bool) {
		for _, f := range files {
			for _, g := range f.Groups {
				for i := range g.Rules {
					if !yield(&g.Rules[i]) {
						return
					}
				}
			}
		}
	}
}
