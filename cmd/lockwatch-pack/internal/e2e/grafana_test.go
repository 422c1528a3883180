package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// This file reads the generated dashboards the way Grafana does and fills in their variables
// the way Grafana's Prometheus data source does, so panels_test.go can run every panel query
// against a real Prometheus. Only what the lockwatch dashboards use is modelled; anything else
// (an unknown variable, a variable query form Grafana would not run) fails the check rather than
// being guessed.

// gDashboard is the part of a dashboard's JSON the panel check reads.
type gDashboard struct {
	UID        string   `json:"uid"`
	Panels     []gPanel `json:"panels"`
	Templating struct {
		List []gVariable `json:"list"`
	} `json:"templating"`
}

type gPanel struct {
	Title   string    `json:"title"`
	Type    string    `json:"type"`
	Panels  []gPanel  `json:"panels"` // a collapsed row's panels
	Targets []gTarget `json:"targets"`
}

type gTarget struct {
	RefID   string `json:"refId"`
	Expr    string `json:"expr"`
	Instant bool   `json:"instant"`
}

type gVariable struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Query      any    `json:"query"`
	Regex      string `json:"regex"`
	IncludeAll bool   `json:"includeAll"`
	AllValue   string `json:"allValue"`
	Multi      bool   `json:"multi"`
}

// panelTarget is one query of one panel.
type panelTarget struct {
	where   string // dashboard › panel › refId
	panel   string // dashboard › panel
	expr    string
	instant bool
}

func decodeDashboard(data []byte) (gDashboard, error) {
	var d gDashboard
	err := json.Unmarshal(data, &d)
	return d, err
}

// targets lists every query of d in layout order, rows' panels included.
func (d gDashboard) targets() []panelTarget {
	var out []panelTarget
	var walk func([]gPanel)
	walk = func(ps []gPanel) {
		for _, p := range ps {
			walk(p.Panels)
			for _, t := range p.Targets {
				panel := d.UID + " › " + p.Title
				out = append(out, panelTarget{where: panel + " › " + t.RefID, panel: panel, expr: t.Expr, instant: t.Instant})
			}
		}
	}
	walk(d.Panels)
	return out
}

// timeRange is the dashboard's time picker and the built-in variables Grafana derives from it.
type timeRange struct {
	from, to time.Time
	// step is $__interval, the range query's resolution.
	step time.Duration
	// builtins are $__interval, $__rate_interval, $__range and their _ms/_s forms.
	builtins map[string]string
}

// newTimeRange is what Grafana computes for a panel maxDataPoints wide over [from, to] with the
// data source's scrape interval set to scrape: $__interval is the range divided by the points,
// never below the scrape interval; $__rate_interval is max($__interval + scrape, 4 × scrape).
func newTimeRange(from, to time.Time, scrape time.Duration, maxDataPoints int) timeRange {
	span := to.Sub(from).Truncate(time.Second)
	step := (span / time.Duration(maxDataPoints)).Round(time.Second)
	step = max(step, scrape)
	rate := max(step+scrape, 4*scrape)
	secs := int64(math.Ceil(span.Seconds()))
	return timeRange{from: from, to: to, step: step, builtins: map[string]string{
		"__interval":         promDuration(step),
		"__interval_ms":      strconv.FormatInt(step.Milliseconds(), 10),
		"__rate_interval":    promDuration(rate),
		"__rate_interval_ms": strconv.FormatInt(rate.Milliseconds(), 10),
		"__range":            strconv.FormatInt(secs, 10) + "s",
		"__range_s":          strconv.FormatInt(secs, 10),
		"__range_ms":         strconv.FormatInt(secs*1000, 10),
	}}
}

// promDuration renders d in whole seconds, as Grafana renders intervals for Prometheus.
func promDuration(d time.Duration) string {
	return strconv.FormatInt(int64(d/time.Second), 10) + "s"
}

// variableRef matches $name, ${name} and [[name]] references, as Grafana interpolates them.
var variableRef = regexp.MustCompile(`\$\{([a-zA-Z0-9_]+)(?::[a-z]+)?\}|\$([a-zA-Z0-9_]+)|\[\[([a-zA-Z0-9_]+)\]\]`)

// interpolate replaces every variable reference in s with its value and fails on a reference
// to a variable it was not given.
func interpolate(s string, values map[string]string) (string, error) {
	var unknown []string
	out := variableRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := variableRef.FindStringSubmatch(ref)
		name := m[1] + m[2] + m[3]
		v, ok := values[name]
		if !ok {
			unknown = append(unknown, ref)
			return ref
		}
		return v
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("unknown variables %v in %q", unknown, s)
	}
	return out, nil
}

// regexEscape escapes a selected value as Grafana's Prometheus data source does for a
// multi-value or include-All variable: regex metacharacters get a backslash, itself escaped
// for the PromQL string it lands in.
func regexEscape(v string) string {
	var b strings.Builder
	for _, r := range v {
		if strings.ContainsRune(`\^$*+?.()|{}[]`, r) {
			b.WriteString(`\\`)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// selected renders the chosen values of a variable as Grafana substitutes them: one value
// escaped, several as an escaped alternation in parentheses.
func selected(values []string) string {
	escaped := make([]string, len(values))
	for i, v := range values {
		escaped[i] = regexEscape(v)
	}
	if len(escaped) == 1 {
		return escaped[0]
	}
	return "(" + strings.Join(escaped, "|") + ")"
}

// variableQuery is a query variable's definition in the forms Grafana's Prometheus data source
// runs: label_values(selector, label), label_values(label) and query_result(expr).
type variableQuery struct {
	label    string // label_values: the label whose values are listed
	selector string // label_values: the series selector, "" for all series
	expr     string // query_result: the instant query
}

var (
	labelValuesForm = regexp.MustCompile(`^label_values\((?:(.+),\s*)?([a-zA-Z_][a-zA-Z0-9_]*)\)$`)
	queryResultForm = regexp.MustCompile(`^query_result\((.+)\)$`)
)

func parseVariableQuery(q string) (variableQuery, error) {
	q = strings.TrimSpace(q)
	if m := labelValuesForm.FindStringSubmatch(q); m != nil {
		return variableQuery{selector: m[1], label: m[2]}, nil
	}
	if m := queryResultForm.FindStringSubmatch(q); m != nil {
		return variableQuery{expr: m[1]}, nil
	}
	return variableQuery{}, fmt.Errorf("variable query %q is not label_values(…) or query_result(…)", q)
}

// queryResultText renders one instant-query sample as Grafana's query_result lists it before
// the variable's regex applies: name{l="v", …} value timestamp_ms.
func queryResultText(metric map[string]string, value string, ts float64) string {
	var parts []string
	for _, k := range sortedKeys(metric) {
		if k == "__name__" {
			continue
		}
		parts = append(parts, k+`="`+metric[k]+`"`)
	}
	return metric["__name__"] + "{" + strings.Join(parts, ", ") + "} " + value + " " + strconv.FormatInt(int64(ts*1000), 10)
}

// applyRegex keeps what a variable's regex (/…/) selects: the first capture group when there
// is one, else the whole text; no regex keeps every text.
func applyRegex(texts []string, re string) ([]string, error) {
	if re == "" {
		return texts, nil
	}
	if len(re) < 2 || re[0] != '/' || re[len(re)-1] != '/' {
		return nil, fmt.Errorf("variable regex %q is not /…/", re)
	}
	r, err := regexp.Compile(re[1 : len(re)-1])
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range texts {
		m := r.FindStringSubmatch(s)
		switch {
		case m == nil:
		case len(m) > 1:
			out = append(out, m[1])
		default:
			out = append(out, m[0])
		}
	}
	return out, nil
}
