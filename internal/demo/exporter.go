package demo

import (
	"time"

	"gopkg.in/yaml.v3"
)

// ExporterConfig renders a lock-exporter configuration file (see internal/exporterconfig) that
// watches the demo's namespaces on the Redis at addr, with each namespace's declared TTL and
// renew interval, so the exporter's expectation gauges and LockRenewalStalled have their inputs.
func ExporterConfig(addr string, namespaces []Namespace) ([]byte, error) {
	type ns struct {
		Name                  string `yaml:"name"`
		Pattern               string `yaml:"pattern"`
		ExpectedTTL           string `yaml:"expected_ttl,omitempty"`
		ExpectedRenewInterval string `yaml:"expected_renew_interval,omitempty"`
	}
	var cfg struct {
		Redis struct {
			Addr string `yaml:"addr"`
		} `yaml:"redis"`
		Namespaces []ns `yaml:"namespaces"`
	}
	cfg.Redis.Addr = addr
	for _, n := range namespaces {
		cfg.Namespaces = append(cfg.Namespaces, ns{
			Name:                  n.Name,
			Pattern:               n.Pattern,
			ExpectedTTL:           durationText(n.TTL),
			ExpectedRenewInterval: durationText(n.RenewInterval),
		})
	}
	return yaml.Marshal(cfg)
}

func durationText(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}
