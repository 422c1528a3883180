package packconfig

// Dashboards is the dashboard generator's section of the pack configuration (`dashboards:` in
// YAML). The dashboards generator owns this file: it adds its fields here together with their
// defaults in defaultDashboards and their checks in validate. The rules ignore this section.
type Dashboards struct{}

// defaultDashboards returns the dashboard settings Default() uses.
func defaultDashboards() Dashboards { return Dashboards{} }

// validate reports the first invalid dashboard setting, prefixed with its YAML key.
func (Dashboards) validate() error { return nil }
