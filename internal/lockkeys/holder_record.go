package lockkeys

import (
	"strconv"
	"strings"
	"time"
)

// HolderAcquiredSeparator separates a holder record's description from the time the lock was
// acquired. lease refuses control characters in descriptions, so the tab cannot be part of one.
const HolderAcquiredSeparator = "\t"

// HolderRecord is a holder key's value, parsed. lease writes "<description>\t<acquired>",
// acquired being the Redis server's TIME in Unix milliseconds when the lock was taken (in the
// acquire script, so no client clock is involved); records written before that carry the
// description alone, and still parse, without Acquired.
type HolderRecord struct {
	Description string
	// Acquired is the server time of the acquisition; zero when the record does not carry it.
	Acquired time.Time
}

// ParseHolder reads a holder key's value. Anything after the last tab that is not a positive
// integer of milliseconds leaves the whole value as the description.
func ParseHolder(v string) HolderRecord {
	i := strings.LastIndex(v, HolderAcquiredSeparator)
	if i < 0 {
		return HolderRecord{Description: v}
	}
	ms, err := strconv.ParseInt(v[i+len(HolderAcquiredSeparator):], 10, 64)
	if err != nil || ms <= 0 {
		return HolderRecord{Description: v}
	}
	return HolderRecord{Description: v[:i], Acquired: time.UnixMilli(ms)}
}
