package helmchart

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/dashboards"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// Dir is where the chart is written, relative to the pack's root.
const Dir = "deploy/helm/lock-exporter"

// Version is the release the chart is cut with: its appVersion, and without the "v" its chart
// version. It equals the repository's VERSION file (a test checks), bumped with each release.
const Version = "v0.1.0"

// RulesDir and DashboardsDir are the chart's directories of generated pack files.
const (
	RulesDir      = "files/rules"
	DashboardsDir = "files/dashboards"
)

// source is the hand-written part of the chart. "all:" keeps _helpers.tpl and .helmignore,
// which embed would otherwise leave out.
//
//go:embed all:chart
var source embed.FS

// Generate is the chart's pack.Generator: the embedded chart, Chart.yaml for Version, and the
// rules and dashboards for cfg under files/.
func Generate(cfg packconfig.Config) ([]pack.File, error) {
	files := []pack.File{{Path: Dir + "/Chart.yaml", Data: chartYAML(Version)}}
	err := fs.WalkDir(source, "chart", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := source.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, pack.File{Path: Dir + "/" + strings.TrimPrefix(p, "chart/"), Data: withNotice(p, data)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("helmchart: %w", err)
	}
	generated, err := generatedFiles()
	if err != nil {
		return nil, err
	}
	files = append(files, generated...)
	ruleFiles, err := rules.Generate(cfg)
	if err != nil {
		return nil, err
	}
	boards, err := dashboards.Generate(cfg)
	if err != nil {
		return nil, err
	}
	for _, f := range ruleFiles {
		files = append(files, pack.File{Path: Dir + "/" + RulesDir + "/" + path.Base(f.Path), Data: f.Data})
	}
	for _, f := range boards {
		files = append(files, pack.File{Path: Dir + "/" + DashboardsDir + "/" + path.Base(f.Path), Data: f.Data})
	}
	if cfg.DescribesLocks() {
		values, err := valuesFile(cfg)
		if err != nil {
			return nil, err
		}
		files = append(files, values)
	}
	return files, nil
}

// generatedFiles are the chart's files made from the exporter's configuration types: the
// schema and the sections its templates check.
func generatedFiles() ([]pack.File, error) {
	schema, err := Schema()
	if err != nil {
		return nil, err
	}
	sections, err := configFieldsTemplate()
	if err != nil {
		return nil, err
	}
	return []pack.File{
		{Path: Dir + "/values.schema.json", Data: schema},
		{Path: Dir + "/templates/_exporter_config.tpl", Data: sections},
	}, nil
}

// withNotice puts pack.Notice at the top of an embedded chart file, in its comment syntax: the
// templates' renders to nothing.
func withNotice(name string, data []byte) []byte {
	notice := pack.HashNotice()
	if strings.HasPrefix(name, "chart/templates/") {
		notice = pack.TemplateNotice()
	}
	return append([]byte(notice), data...)
}

// templateHeader opens a generated template file.
var templateHeader = pack.TemplateNotice()

// chartYAML is the chart's metadata for a release version vX.Y.Z: Helm wants a SemVer chart
// version without the "v"; appVersion keeps the image tag as released.
func chartYAML(version string) []byte {
	return []byte(pack.HashNotice() + `apiVersion: v2
name: lock-exporter
description: Prometheus exporter for Redis lease locks, with lockwatch's alerting rules and Grafana dashboards
type: application
version: ` + strings.TrimPrefix(version, "v") + `
appVersion: "` + version + `"
home: https://github.com/lockwatch/lockwatch
sources:
  - https://github.com/lockwatch/lockwatch
keywords: [redis, locks, prometheus, exporter, grafana]
`)
}
