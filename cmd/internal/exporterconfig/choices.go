package exporterconfig

import "github.com/lockwatch/lockwatch/collectors"

// Choices lists, for each text setting that accepts only some values, the values it accepts,
// keyed by the Go type and field that hold it ("Scan.Mode"). Tools that describe the file
// from its types (lockwatch-pack's chart schema) read the sets here, so a value the exporter
// accepts is never refused by the chart and the reverse.
func Choices() map[string][]string {
	return map[string][]string{
		"Scan.Mode":       {string(collectors.ModeAuto), string(collectors.ModeWalk)},
		"Scan.Feed":       {string(collectors.FeedAuto), string(collectors.FeedTracking), string(collectors.FeedNotifications)},
		"Namespace.Types": {collectors.TypeString, collectors.TypeHash},
	}
}
