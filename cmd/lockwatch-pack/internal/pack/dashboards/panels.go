package dashboards

import (
	"cmp"
	"slices"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/heatmap"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// Grafana unit identifiers used by the panels.
const (
	unitCount   = "none"
	unitRatio   = "percentunit"
	unitSeconds = "s"
	unitPerSec  = "ops"
)

// Panel sizes on Grafana's 24-column grid.
const (
	statHeight   = 4
	statWidth    = 4
	graphHeight  = 8
	graphWidth   = 12
	thirdWidth   = 8
	tableHeight  = 8
	fullWidth    = 24
	alertHeight  = 6
	heatmapWidth = 24
)

// datasourceRef points every panel, query and variable at the datasource
// variable, so no Grafana instance's datasource name or uid is baked in.
func datasourceRef() common.DataSourceRef {
	return common.DataSourceRef{
		Type: cog.ToPtr("prometheus"),
		Uid:  cog.ToPtr("${" + varDatasource + "}"),
	}
}

// series is a range query drawn as one or more lines; legend is a Grafana
// legend template such as "{{lock_namespace}}".
func series(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		Datasource(datasourceRef()).
		Expr(expr).
		LegendFormat(legend).
		Range()
}

// instantTable is an instant query rendered as table rows, one per series.
func instantTable(expr string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		Datasource(datasourceRef()).
		Expr(expr).
		Format(prometheus.PromQueryFormatTable).
		Instant()
}

// refID names targets A, B, C… in the order they were given.
func refID(i int) string { return string(rune('A' + i)) }

// graph is a time series panel with a table legend, the default for rates,
// ratios and durations.
func graph(title, description, unit string, targets ...*prometheus.DataqueryBuilder) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasourceRef()).
		Unit(unit).
		Min(0).
		Height(graphHeight).
		Span(graphWidth).
		FillOpacity(10).
		LineWidth(1).
		ShowPoints(common.VisibilityModeNever).
		Legend(common.NewVizLegendOptionsBuilder().
			DisplayMode(common.LegendDisplayModeTable).
			Placement(common.LegendPlacementBottom).
			ShowLegend(true).
			Calcs([]string{"lastNotNull", "max"})).
		Tooltip(common.NewVizTooltipOptionsBuilder().
			Mode(common.TooltipDisplayModeMulti).
			Sort(common.SortOrderDescending))
	for i, t := range targets {
		p.WithTarget(t.RefId(refID(i)))
	}
	return p
}

// alertLine draws alert thresholds as dashed lines in their severity's
// colour, so a reader sees how close each series is to paging someone. No
// levels (the alert is disabled) draws nothing.
func alertLine(p *timeseries.PanelBuilder, levels []level) *timeseries.PanelBuilder {
	if len(levels) == 0 {
		return p
	}
	return p.
		Thresholds(alertSteps(levels)).
		ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeDashed))
}

// alertSteps colours values green below the lowest level and in each level's
// colour from its value up.
func alertSteps(levels []level) *dashboard.ThresholdsConfigBuilder {
	sorted := slices.SortedStableFunc(slices.Values(levels), func(a, b level) int {
		return cmp.Compare(a.value, b.value)
	})
	steps := []dashboard.Threshold{{Color: "green"}}
	for _, l := range sorted {
		steps = append(steps, dashboard.Threshold{Value: cog.ToPtr(l.value), Color: l.color})
	}
	return dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).Steps(steps)
}

// single is a stat panel reducing one query to its last value.
func single(title, description, unit string, target *prometheus.DataqueryBuilder) *stat.PanelBuilder {
	return stat.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasourceRef()).
		Unit(unit).
		Height(statHeight).
		Span(statWidth).
		GraphMode(common.BigValueGraphModeArea).
		ColorMode(common.BigValueColorModeValue).
		TextMode(common.BigValueTextModeValue).
		JustifyMode(common.BigValueJustifyModeCenter).
		Orientation(common.VizOrientationAuto).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}).Values(false)).
		WithTarget(target.RefId(refID(0)))
}

// secondsHeatmap draws a Prometheus histogram of durations in seconds, bucket by
// bucket over time; the query must return per-le rates and use the heatmap format.
func secondsHeatmap(title, description string, target *prometheus.DataqueryBuilder) *heatmap.PanelBuilder {
	return heatmap.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasourceRef()).
		Unit(unitSeconds).
		Height(graphHeight).
		Span(heatmapWidth).
		Calculate(false).
		CellGap(1).
		Color(heatmap.NewHeatmapColorOptionsBuilder().
			Mode(heatmap.HeatmapColorModeScheme).
			Scheme("Oranges").
			Fill("dark-orange").
			Scale(heatmap.HeatmapColorScaleExponential).
			Exponent(0.5).
			Steps(64)).
		YAxis(heatmap.NewYAxisConfigBuilder().Unit(unitSeconds)).
		CellValues(heatmap.NewCellValuesBuilder().Unit(unitPerSec)).
		ShowValue(common.VisibilityModeNever).
		ShowLegend().
		Tooltip(heatmap.NewHeatmapTooltipBuilder().Mode(common.TooltipDisplayModeSingle).YHistogram(true)).
		WithTarget(target.
			Format(prometheus.PromQueryFormatHeatmap).
			LegendFormat("{{le}}").
			RefId(refID(0)))
}

// labelTable lists the series of one instant query as rows, hiding the
// columns Prometheus adds that mean nothing to a reader.
func labelTable(title, description, unit string, hide []string, rename map[string]string, sortBy string, target *prometheus.DataqueryBuilder) *table.PanelBuilder {
	exclude := map[string]bool{"Time": true, "__name__": true}
	for _, h := range hide {
		exclude[h] = true
	}
	options := map[string]any{"excludeByName": exclude}
	if len(rename) > 0 {
		options["renameByName"] = rename
	}
	p := table.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(datasourceRef()).
		Unit(unit).
		Height(tableHeight).
		Span(fullWidth).
		ShowHeader(true).
		CellHeight(common.TableCellHeightSm).
		// An unset footer encodes its reducer list as null, which Grafana's
		// schema (and the SDK's strict decoder) rejects.
		Footer(common.NewTableFooterOptionsBuilder().Show(false).Reducer([]string{})).
		WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: options}).
		WithTarget(target.RefId(refID(0)))
	if sortBy != "" {
		p.SortBy([]cog.Builder[common.TableSortByFieldState]{
			common.NewTableSortByFieldStateBuilder().DisplayName(sortBy).Desc(true),
		})
	}
	return p
}
