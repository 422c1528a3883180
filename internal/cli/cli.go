// Package cli holds what lockwatch's commands (lock-exporter, lockwatch-demo) share on the command
// line: quiet pflag sets with LOCK_EXPORTER_* environment fallbacks, the one-line usage error,
// the help text and the process logger.
package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockwatch/lockwatch/internal/exporterconfig"
)

// EnvPrefix starts every environment fallback: --redis.addr falls back to LOCK_EXPORTER_REDIS_ADDR.
const EnvPrefix = "LOCK_EXPORTER_"

// EnvName maps a flag name to its environment fallback.
func EnvName(flag string) string {
	return EnvPrefix + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(flag))
}

// NewFlagSet is a flag set that prints nothing itself: errors are printed by the caller as one
// line, usage only on --help.
func NewFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// ParseWithEnv parses args, then sets every flag not given from its environment variable.
func ParseWithEnv(fs *pflag.FlagSet, args []string, getenv func(string) string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "help" || f.Name == "version" {
			return
		}
		name := EnvName(f.Name)
		v := getenv(name)
		if v == "" {
			return
		}
		// A repeatable string flag takes a comma-separated list from the environment.
		parts := []string{v}
		if f.Value.Type() == "stringArray" {
			parts = strings.Split(v, ",")
		}
		for _, p := range parts {
			if setErr := fs.Set(f.Name, p); setErr != nil {
				err = fmt.Errorf("%s=%q: %v", name, v, setErr)
				return
			}
		}
	})
	return err
}

// PrintUsage writes a command's help to w.
func PrintUsage(w io.Writer, synopsis string, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "Usage: %s\n\nFlags (each falls back to %s<FLAG>, e.g. --redis.addr to LOCK_EXPORTER_REDIS_ADDR):\n%s",
		synopsis, EnvPrefix, fs.FlagUsagesWrapped(100))
}

// IsHelp reports whether a parse error is the request for help (-h, --help).
func IsHelp(err error) bool { return errors.Is(err, pflag.ErrHelp) }

var (
	// pflag says: invalid argument "x" for "--scan.batch-size" flag: strconv.ParseInt: ...
	pflagInvalid = regexp.MustCompile(`^invalid argument (".*") for "(-[^"]+)" flag: (.*)$`)
	strconvError = regexp.MustCompile(`strconv\.Parse\w+: parsing ".*": (invalid syntax|value out of range)`)
)

// UsageMessage is err on one line, phrased as "setting value: problem".
func UsageMessage(err error) string {
	// Redacted last-ditch: a message may quote a flag or file value that holds a URL password.
	msg := exporterconfig.RedactMessage(strings.Join(strings.Fields(err.Error()), " "))
	msg = strings.TrimPrefix(msg, exporterconfig.ErrInvalid.Error()+": ")
	if m := pflagInvalid.FindStringSubmatch(msg); m != nil {
		msg = fmt.Sprintf("%s %s: %s", m[2], m[1], m[3])
	}
	return strconvError.ReplaceAllStringFunc(msg, func(s string) string {
		if strings.HasSuffix(s, "out of range") {
			return "number out of range"
		}
		return "not a number"
	})
}

// NewLogger builds the process logger from --log.level and --log.format.
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log.level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch format {
	case "logfmt":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log.format %q: want logfmt or json", format)
}
