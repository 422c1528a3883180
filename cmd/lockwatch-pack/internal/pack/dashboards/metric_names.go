package dashboards

// Metric names the dashboards read. They are the public metric contract
// (docs/metrics.md, docs/deploy.md#versioning); the tests check every name
// used in a query against what the library and exporter really register and
// what the rules record.
const (
	metricAcquireWait        = "lock_acquire_wait_seconds"
	metricRenewals           = "lock_renewals_total"
	metricReleases           = "lock_releases_total"
	metricAbandoned          = "lock_abandoned_total"
	metricHeldSeconds        = "lock_held_seconds"
	metricHeld               = "lock_held"
	metricFencedWrites       = "lock_fenced_writes_total"
	metricWaiters            = "lock_waiters"
	metricHeldOldest         = "lock_held_oldest_seconds"
	metricKeys               = "lock_keys"
	metricKeysWithoutTTL     = "lock_keys_without_ttl"
	metricKeyTTLMin          = "lock_key_ttl_min_seconds"
	metricKeyIdleMax         = "lock_key_idle_max_seconds"
	metricKeyIdle            = "lock_key_idle_seconds"
	metricKeyWithoutTTLIdle  = "lock_key_without_ttl_idle_seconds"
	metricKeyHolderInfo      = "lock_key_holder_info"
	metricKeyHeld            = "lock_key_held_seconds"
	metricExporterUp         = "lock_exporter_up"
	metricScrapeDuration     = "lock_exporter_scrape_duration_seconds"
	metricKeysTruncated      = "lock_exporter_keys_truncated"
	metricScrapeComplete     = "lock_exporter_scrape_complete"
	metricIdleAvailable      = "lock_exporter_idle_time_available"
	metricExpectedTTL        = "lock_expected_ttl_seconds"
	metricExpectedRenewEvery = "lock_expected_renew_interval_seconds"

	// The lock lifecycle the exporter derives from its change feed.
	metricKeyAcquisitions    = "lock_key_acquisitions_total"
	metricKeyEnds            = "lock_key_ends_total"
	metricKeyTakeovers       = "lock_key_takeovers_total"
	metricKeyHoldDuration    = "lock_key_hold_duration_seconds"
	metricLifecycleFollowing = "lock_exporter_lifecycle_following"
	metricEndsByExpiry       = "lock_exporter_lifecycle_ends_by_expiry"

	// metricAlerts is Prometheus's own series for pending and firing alerts.
	metricAlerts = "ALERTS"
)
