package demo

import (
	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
	"github.com/lockwatch/lockwatch/lease"
)

// ExporterConfig is the lock-exporter configuration that watches the demo's namespaces on the
// Redis at addr, with each namespace's declared TTL, renew interval and maximum hold, so the
// exporter's expectation gauges, LockRenewalStalled and LockHeldTooLong have their inputs, and
// the reconciler declared to end by expiry, so its rotation is no lapse. It is validated: the demo serves
// it with cmd/internal/exporter, and the end-to-end test writes it as the exporter's YAML file.
func ExporterConfig(addr string, namespaces []Namespace) (exporterconfig.Config, error) {
	cfg := exporterconfig.Defaults()
	cfg.Redis.Addr = addr
	for _, n := range namespaces {
		cfg.Namespaces = append(cfg.Namespaces, exporterconfig.Namespace{
			Name:                  n.Name,
			Pattern:               n.Pattern,
			ExpectedTTL:           exporterconfig.Duration(n.TTL),
			ExpectedRenewInterval: exporterconfig.Duration(n.RenewInterval),
			ExpectedMaxHold:       exporterconfig.Duration(n.MaxHold),
			Types:                 n.Types,
			EndsByExpiry:          n.endsByExpiry(),
		})
	}
	return cfg, cfg.Validate()
}

// endsByExpiry: the namespace's leases are never released, so each hold ends by expiry on
// purpose and the next worker takes the key (lease's HoldUntilExpiry).
func (n Namespace) endsByExpiry() bool {
	return n.client == leaseClient && n.policy.ReleaseMode == lease.HoldUntilExpiry
}
