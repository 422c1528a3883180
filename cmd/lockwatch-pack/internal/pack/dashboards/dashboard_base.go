package dashboards

import (
	"cmp"
	"slices"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// commonTag is on every lockwatch dashboard; the dashboard links menu finds
// the other lockwatch dashboards through it.
const commonTag = "lockwatch"

// base sets what every lockwatch dashboard shares: identity, time settings,
// variables and the links menu.
func base(s settings, uid, title, description string, withStore bool) *dashboard.DashboardBuilder {
	tags := []string{commonTag}
	for _, t := range s.tags {
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	return dashboard.NewDashboardBuilder(title).
		Uid(uid).
		Description(description).
		Tags(tags).
		// Generated files are edited in the generator, not in Grafana
		// (dashboard-linter's uneditable rule); Grafana's "Make editable"
		// still allows experiments on a copy.
		Readonly().
		Timezone(s.timezone).
		Time("now-"+s.timeRange, "now").
		Refresh(s.refresh).
		Timepicker(dashboard.NewTimePickerBuilder().RefreshIntervals(refreshIntervals(s.refresh))).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Variables(variables(s, withStore)).
		Link(dashboard.NewDashboardLinkBuilder("Lockwatch dashboards").
			Type(dashboard.DashboardLinkTypeDashboards).
			Tags([]string{commonTag}).
			AsDropdown(true).
			IncludeVars(true).
			KeepTime(true))
}

// refreshIntervals are the choices of the refresh picker; Grafana only
// offers the configured refresh if it is among them.
func refreshIntervals(configured string) []string {
	choices := []string{"30s", "1m", "5m", "15m", "30m", "1h"}
	if slices.Contains(choices, configured) {
		return choices
	}
	all := append(choices, configured)
	slices.SortStableFunc(all, func(a, b string) int {
		da, _ := packconfig.GrafanaInterval(a)
		db, _ := packconfig.GrafanaInterval(b)
		return cmp.Compare(da, db)
	})
	return all
}
