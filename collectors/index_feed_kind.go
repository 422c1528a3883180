package collectors

// feedKind is the change feed an index node opens (the Scanner reads it from Options.Feed).
type feedKind uint8

const (
	// feedKindNone is a node's feed before its first: no kind.
	feedKindNone feedKind = iota
	// feedKindAuto: notifications where CONFIG GET shows them sufficient, else tracking.
	feedKindAuto
	feedKindTracking
	feedKindNotifications
)

// eventsFunc receives, after a drain of a keyspace-notifications feed re-read them, the events
// of each lock key the feed named (the Scanner's EventsFunc says what it is given).
type eventsFunc func(key string, mask uint64, events []string, at int64)
