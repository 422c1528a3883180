package index

// FeedKind is the change feed an index node opens (the Scanner reads it from Options.Feed).
type FeedKind uint8

const (
	// FeedKindNone is a node's feed before its first: no kind.
	FeedKindNone FeedKind = iota
	// FeedKindAuto: notifications where CONFIG GET shows them sufficient, else tracking.
	FeedKindAuto
	FeedKindTracking
	FeedKindNotifications
)

// EventsFunc receives, after a drain of a keyspace-notifications feed re-read them, the events
// of each lock key the feed named (the Scanner's EventsFunc says what it is given).
type EventsFunc func(key string, mask uint64, events []string, at int64)
