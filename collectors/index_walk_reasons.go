package collectors

// Why an index node hands a namespace to the walk for a scrape (indexServe.WalkWhy): the
// reason label values of lock_exporter_scan_mode, a contract, which the exposition gives as
// they are.
const (
	whyTrackingRefused  = "tracking_refused"
	whyKeyBudget        = "key_budget"
	whyIndexUnavailable = "index_unavailable"
	whyResyncing        = "index_resync"
)

// trackingRefusedText explains whyTrackingRefused in a log line.
const trackingRefusedText = "the server refused RESP3 client tracking or a command the lock-key index needs"
