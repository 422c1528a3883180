package ruletests

import (
	"fmt"
	"strings"
	"time"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack/rules"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// Dir is where the rule tests are written, beside the rule files they test.
const Dir = rules.Dir + "/tests"

// Generate is the rule tests' pack.Generator: one promtool test file per alert, each with the
// scenarios that show when that alert fires and when it must not.
func Generate(cfg packconfig.Config) ([]pack.File, error) {
	g, err := newGen(cfg)
	if err != nil {
		return nil, err
	}
	var files []pack.File
	for _, a := range g.alerts() {
		scenarios := a.build()
		if g.err != nil {
			return nil, fmt.Errorf("rule tests of %s: %w", a.name, g.err)
		}
		data, err := g.render(a.name, a.disabled, scenarios)
		if err != nil {
			return nil, fmt.Errorf("rule tests of %s: %w", a.name, err)
		}
		files = append(files, pack.File{Path: Dir + "/" + FileName(a.name), Data: data})
	}
	return files, nil
}

// FileName is the test file of an alert: LockKeyWithoutTTL's is lock_key_without_ttl_test.yml.
func FileName(alert string) string {
	var b strings.Builder
	for i, r := range alert {
		if i > 0 && r >= 'A' && r <= 'Z' && !(alert[i-1] >= 'A' && alert[i-1] <= 'Z') {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToLower(b.String()) + "_test.yml"
}

// alertTests are the scenarios of one alert; a disabled alert keeps its file, which then expects
// silence where the alert would fire, so a test file left from an earlier run cannot fail.
type alertTests struct {
	name     string
	disabled bool
	build    func() []scenario
}

// alerts lists every alert of the pack with its scenarios, in the order the rules are written.
func (g *gen) alerts() []alertTests {
	a := g.cfg.Alerts
	return []alertTests{
		{rules.AlertNotOwnedRatioHigh, a.NotOwnedRatio.Disabled, g.notOwnedRatio},
		{rules.AlertRenewalFailureRatioHigh, a.RenewalFailureRatio.Disabled, g.renewalFailureRatio},
		{rules.AlertAbandonmentsSustained, a.Abandonments.Disabled, g.abandonments},
		{rules.AlertWaitP99High, a.WaitP99.Disabled, g.waitP99},
		{rules.AlertFencedWriteRejectionRatioHigh, a.FencedWriteRejectionRatio.Disabled, g.fencedWrites},
		{rules.AlertKeyWithoutTTL, a.KeyWithoutTTL.Disabled, g.keyWithoutTTL},
		{rules.AlertRenewalStalled, a.RenewalStalled.Disabled, g.renewalStalled},
		{rules.AlertExporterRedisDown, a.ExporterRedisDown.Disabled, g.exporterRedisDown},
		{rules.AlertExporterAbsent, a.ExporterAbsent.Disabled, g.exporterAbsent},
		{rules.AlertExporterScrapeIncomplete, a.ExporterScrapeIncomplete.Disabled, g.scrapeIncomplete},
		{rules.AlertExporterKeysTruncated, a.ExporterKeysTruncated.Disabled, g.keysTruncated},
		{rules.AlertExporterConfigReloadFailed, a.ExporterConfigReloadFailed.Disabled, g.configReloadFailed},
		{rules.AlertHeldTooLong, a.HeldTooLong.Disabled, g.heldTooLong},
		{rules.AlertKeyLapseRatioHigh, a.LapseRatio.Disabled, g.lapseRatio},
		{rules.AlertKeyTakeoverRatioHigh, a.TakeoverRatio.Disabled, g.takeoverRatio},
	}
}

// gen carries the configuration through the scenario builders. A builder that cannot find label
// values for the configured selectors records the first such error in err, which Generate
// returns; the scenarios built meanwhile are discarded.
type gen struct {
	cfg      packconfig.Config
	lib, exp selector
	step     time.Duration
	built    []rules.RuleFile // for the annotations a user sees and the rule groups' order
	err      error
}

func newGen(cfg packconfig.Config) (*gen, error) {
	built, err := rules.Build(cfg)
	if err != nil {
		return nil, err
	}
	lib, err := parseSelector("selectors.library", cfg.Selectors.Library)
	if err != nil {
		return nil, err
	}
	exp, err := parseSelector("selectors.exporter", cfg.Selectors.Exporter)
	if err != nil {
		return nil, err
	}
	return &gen{cfg: cfg, lib: lib, exp: exp, step: sampleStep(cfg), built: built}, nil
}

func (g *gen) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}
