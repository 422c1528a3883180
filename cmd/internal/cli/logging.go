package cli

import (
	"errors"
	"strings"

	"github.com/prometheus/common/promslog"
	"github.com/spf13/pflag"
)

// AddLogFlags defines --log.level and --log.format on fs over promslog's own values, as
// promslog/flag does for kingpin (which would bring kingpin into the binary). Set the returned
// config's Writer, then promslog.New builds the logger.
func AddLogFlags(fs *pflag.FlagSet, defaultLevel string) *promslog.Config {
	cfg := &promslog.Config{Level: promslog.NewLevel(), Format: promslog.NewFormat()}
	_ = cfg.Level.Set(defaultLevel) // a constant of the caller's
	_ = cfg.Format.Set("logfmt")
	fs.Var(levelValue(cfg.Level), "log.level", "only log messages of this severity or above: "+strings.Join(promslog.LevelFlagOptions, ", "))
	fs.Var(formatValue(cfg.Format), "log.format", "log line format: "+strings.Join(promslog.FormatFlagOptions, " or "))
	return cfg
}

func levelValue(l *promslog.Level) wordValue {
	return wordValue{l, "want debug, info, warn or error"}
}

func formatValue(f *promslog.Format) wordValue {
	return wordValue{f, "want logfmt or json"}
}

// wordValue is a promslog value (one of a few words) as a pflag.Value whose error is this
// package's message rather than promslog's.
type wordValue struct {
	value interface {
		Set(string) error
		String() string
	}
	want string
}

func (v wordValue) Set(s string) error {
	if v.value.Set(s) != nil {
		return errors.New(v.want)
	}
	return nil
}

func (v wordValue) String() string { return v.value.String() }
func (wordValue) Type() string     { return "string" }
