package index

// Why an index node hands a namespace to the walk for a scrape (Serve.WalkWhy): the
// reason label values of lock_exporter_scan_mode, a contract, which the exposition gives as
// they are.
const (
	WhyTrackingRefused  = "tracking_refused"
	WhyKeyBudget        = "key_budget"
	WhyIndexUnavailable = "index_unavailable"
	WhyResyncing        = "index_resync"
)

// TrackingRefusedText explains WhyTrackingRefused in a log line.
const TrackingRefusedText = "the server refused RESP3 client tracking or a command the lock-key index needs"
