package packconfig

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	// Embedded zone data, so a timezone name validates the same on every machine.
	_ "time/tzdata"
)

// Dashboards is the dashboard generator's section of the pack configuration (`dashboards:` in
// YAML). Thresholds drawn on panels are not here: they are read from Alerts, so a panel's line
// always sits where its alert fires.
type Dashboards struct {
	// Datasource is the Prometheus datasource (name or uid) the datasource variable preselects.
	// Default "": Grafana preselects its default datasource. Nothing else names a datasource.
	Datasource string `yaml:"datasource"`
	// DatasourceRegex limits the datasource variable's drop-down, in Grafana's regex syntax,
	// e.g. "/^prod-.*/". Default "" (every Prometheus datasource).
	DatasourceRegex string `yaml:"datasource_regex"`
	// Tags are added to every dashboard next to the fixed "lockwatch" tag. Default none.
	Tags []string `yaml:"tags"`
	// Refresh is the auto-refresh interval, a Grafana interval such as "30s" or "1m".
	// Default "1m". At least 5s, Grafana's default minimum.
	Refresh string `yaml:"refresh"`
	// TimeRange is how far back the dashboards look when opened, e.g. "3h" shows now-3h to now.
	// Default "3h".
	TimeRange string `yaml:"time_range"`
	// Timezone is "browser", "utc" or an IANA zone name such as "Europe/Berlin".
	// Default "browser".
	Timezone string `yaml:"timezone"`
	// StalestKeys is how many keys the overview's stalest-keys table lists. The exporter
	// reports only its own top-K stalest keys per namespace, so a larger number shows at most
	// that many per namespace. Default 10, at most 1000.
	StalestKeys int `yaml:"stalest_keys"`
}

// defaultDashboards returns the dashboard settings Default() uses.
func defaultDashboards() Dashboards {
	return Dashboards{
		Tags:        []string{},
		Refresh:     "1m",
		TimeRange:   "3h",
		Timezone:    "browser",
		StalestKeys: 10,
	}
}

// grafanaInterval is the single-unit interval syntax Grafana accepts for refresh and relative
// time ranges.
var grafanaInterval = regexp.MustCompile(`^([1-9][0-9]*)(s|m|h|d|w)$`)

// GrafanaInterval parses a single-unit Grafana interval such as "30s" or "3h".
func GrafanaInterval(s string) (time.Duration, error) {
	m := grafanaInterval.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a Grafana interval like 30s, 5m, 3h, 1d or 1w", s)
	}
	unit := map[string]time.Duration{
		"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour,
	}[m[2]]
	// Bounded before multiplying: "9999999w" would overflow a Duration and wrap to a negative
	// one, which sorted the refresh picker wrongly and let a nonsense range through.
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || n > int64(maxGrafanaInterval/unit) {
		return 0, fmt.Errorf("%q is longer than %s, more than any Prometheus keeps", s, maxGrafanaIntervalText)
	}
	return time.Duration(n) * unit, nil
}

// maxGrafanaInterval bounds a dashboard interval: longer than any retention Prometheus is run
// with, and far inside what a time.Duration holds.
const (
	maxGrafanaInterval     = 10 * 365 * 24 * time.Hour
	maxGrafanaIntervalText = "10 years (3650d)"
)

// validate reports the first invalid dashboard setting, prefixed with its YAML key.
func (d Dashboards) validate() error {
	for _, f := range []struct{ key, value string }{
		{"datasource", d.Datasource}, {"datasource_regex", d.DatasourceRegex},
	} {
		if strings.ContainsAny(f.value, "\n\r") {
			return fmt.Errorf("%s: %q spans more than one line", f.key, f.value)
		}
	}
	for i, t := range d.Tags {
		if strings.TrimSpace(t) == "" || strings.ContainsAny(t, "\n\r") {
			return fmt.Errorf("tags[%d]: %q is not a one-line, non-empty tag", i, t)
		}
	}
	refresh, err := GrafanaInterval(d.Refresh)
	if err != nil {
		return fmt.Errorf("refresh: %w", err)
	}
	if refresh < 5*time.Second {
		return fmt.Errorf("refresh: %s is below Grafana's 5s minimum", d.Refresh)
	}
	if _, err := GrafanaInterval(d.TimeRange); err != nil {
		return fmt.Errorf("time_range: %w", err)
	}
	switch d.Timezone {
	case "browser", "utc":
	case "":
		return errors.New(`timezone: empty; use "browser", "utc" or an IANA zone name`)
	case "Local":
		// time.LoadLocation's name for the machine's zone, not an IANA name Grafana knows.
		return errors.New(`timezone: "Local" is not "browser", "utc" or an IANA zone name; "browser" shows each viewer's own zone`)
	default:
		if _, err := time.LoadLocation(d.Timezone); err != nil {
			return fmt.Errorf(`timezone: %q is not "browser", "utc" or an IANA zone name`, d.Timezone)
		}
	}
	if d.StalestKeys < 1 || d.StalestKeys > 1000 {
		return fmt.Errorf("stalest_keys: %d is not between 1 and 1000", d.StalestKeys)
	}
	return nil
}
