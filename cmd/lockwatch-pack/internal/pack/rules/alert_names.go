package rules

// Alert names, one constant each so the builders, the drift and promtool tests and the
// end-to-end test cannot spell one differently. The first seven are the public alert contract
// (docs/runbook.md, docs/deploy.md#versioning), then the library's fenced-write alert, the four
// extra exporter alerts, the hold-age alert and the two alerts on the lock lifecycle the exporter
// derives from its feed.
const (
	AlertNotOwnedRatioHigh             = "LockNotOwnedRatioHigh"
	AlertRenewalFailureRatioHigh       = "LockRenewalFailureRatioHigh"
	AlertAbandonmentsSustained         = "LockAbandonmentsSustained"
	AlertWaitP99High                   = "LockWaitP99High"
	AlertKeyWithoutTTL                 = "LockKeyWithoutTTL"
	AlertRenewalStalled                = "LockRenewalStalled"
	AlertExporterRedisDown             = "LockExporterRedisDown"
	AlertFencedWriteRejectionRatioHigh = "LockFencedWriteRejectionRatioHigh"
	AlertExporterAbsent                = "LockExporterAbsent"
	AlertExporterScrapeIncomplete      = "LockExporterScrapeIncomplete"
	AlertExporterKeysTruncated         = "LockExporterKeysTruncated"
	AlertExporterConfigReloadFailed    = "LockExporterConfigReloadFailed"
	AlertHeldTooLong                   = "LockHeldTooLong"
	AlertKeyLapseRatioHigh             = "LockKeyLapseRatioHigh"
	AlertKeyTakeoverRatioHigh          = "LockKeyTakeoverRatioHigh"
)
