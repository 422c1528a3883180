package ruletests

import (
	"fmt"
	"math"
	"strings"
	"text/template"
)

// expandDescription renders an alert's description as Prometheus does when the alert fires:
// the same variables ($labels, $value) and the template functions the pack's descriptions use,
// which behave as Prometheus's (template/template.go). A label the alert does not carry renders
// empty, as in Prometheus.
func expandDescription(text string, lbls map[string]string, value float64) (string, error) {
	const defs = "{{$labels := .Labels}}{{$value := .Value}}"
	t, err := template.New("description").Option("missingkey=zero").Funcs(template.FuncMap{
		"humanizePercentage": func(v float64) string { return fmt.Sprintf("%.4g%%", v*100) },
		"humanizeDuration":   humanizeDuration,
	}).Parse(defs + text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	err = t.Execute(&b, struct {
		Labels map[string]string
		Value  float64
	}{lbls, value})
	return b.String(), err
}

// humanizeDuration is Prometheus's: seconds as "1d 2h 3m 4s" down to whole seconds from a
// minute up, with four significant digits below that.
func humanizeDuration(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprintf("%.4g", v)
	}
	if v == 0 {
		return fmt.Sprintf("%.4gs", v)
	}
	if math.Abs(v) >= 1 {
		sign := ""
		if v < 0 {
			sign, v = "-", -v
		}
		d := int64(v)
		s, m, h, days := d%60, (d/60)%60, (d/3600)%24, d/86400
		switch {
		case days != 0:
			return fmt.Sprintf("%s%dd %dh %dm %ds", sign, days, h, m, s)
		case h != 0:
			return fmt.Sprintf("%s%dh %dm %ds", sign, h, m, s)
		case m != 0:
			return fmt.Sprintf("%s%dm %ds", sign, m, s)
		}
		return fmt.Sprintf("%s%.4gs", sign, v)
	}
	prefix := ""
	for _, p := range []string{"m", "u", "n", "p", "f", "a", "z", "y"} {
		if math.Abs(v) >= 1 {
			break
		}
		prefix = p
		v *= 1000
	}
	return fmt.Sprintf("%.4g%ss", v, prefix)
}
