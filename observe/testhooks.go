package observe

import (
	"time"

	"github.com/lockwatch/lockwatch/internal/testhooks"
)

// The integration module's OTel tests drive two Observers by one manual clock; see
// internal/testhooks.
func init() {
	testhooks.SetObserverClock = func(o any, now func() time.Time) { o.(*Observer).testNow = now }
}
