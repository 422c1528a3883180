package packconfig

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseDashboardOverrides(t *testing.T) {
	cfg, err := Parse([]byte(`
dashboards:
  datasource: prod-prometheus
  datasource_regex: /^prod-.*/
  tags: [redis, team-a]
  refresh: 30s
  time_range: 1d
  timezone: Europe/Berlin
  stalest_keys: 25
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Dashboards{
		Datasource:      "prod-prometheus",
		DatasourceRegex: "/^prod-.*/",
		Tags:            []string{"redis", "team-a"},
		Refresh:         "30s",
		TimeRange:       "1d",
		Timezone:        "Europe/Berlin",
		StalestKeys:     25,
	}
	if !reflect.DeepEqual(cfg.Dashboards, want) {
		t.Errorf("got %+v, want %+v", cfg.Dashboards, want)
	}
}

func TestParseDashboardRejects(t *testing.T) {
	tests := []struct{ name, in, wantErr string }{
		{"compound refresh", "refresh: 1m30s", "dashboards.refresh"},
		{"refresh below minimum", "refresh: 1s", "5s minimum"},
		{"zero time range", "time_range: 0h", "dashboards.time_range"},
		{"unit-less time range", "time_range: '6'", "dashboards.time_range"},
		{"overflowing time range", "time_range: 9999999w", "longer than 10 years"},
		{"time range past int64", "time_range: 99999999999999999999s", "longer than 10 years"},
		{"overflowing refresh", "refresh: 9999999w", "longer than 10 years"},
		{"unknown zone", "timezone: Mars/Olympus", "dashboards.timezone"},
		{"empty zone", "timezone: ''", "dashboards.timezone"},
		{"no stalest keys", "stalest_keys: 0", "dashboards.stalest_keys"},
		{"too many stalest keys", "stalest_keys: 5000", "dashboards.stalest_keys"},
		{"blank tag", "tags: [' ']", "dashboards.tags[0]"},
		{"multi-line datasource", "datasource: \"a\\nb\"", "dashboards.datasource"},
		{"unknown key", "uid: x", "dashboards.uid (line 2): unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte("dashboards:\n  " + tt.in + "\n"))
			if err == nil {
				t.Fatalf("Parse accepted %q", tt.in)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not mention %q", err, tt.wantErr)
			}
		})
	}
}

func TestGrafanaInterval(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30s", 30 * time.Second, true},
		{"5m", 5 * time.Minute, true},
		{"3h", 3 * time.Hour, true},
		{"2d", 48 * time.Hour, true},
		{"1w", 7 * 24 * time.Hour, true},
		{"", 0, false},
		{"05m", 0, false},
		{"1m30s", 0, false},
		{"1y", 0, false},
		{"-1h", 0, false},
		{"3650d", 3650 * 24 * time.Hour, true},
		{"3651d", 0, false},
		{"9999999w", 0, false},
	}
	for _, tt := range tests {
		got, err := GrafanaInterval(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("GrafanaInterval(%q) = %v, %v; want %v, ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
