// Package cli holds what lockwatch's commands (lock-exporter, lockwatch-demo) share on the command
// line: the part of the process a command may touch (Env), quiet pflag sets with
// LOCK_EXPORTER_* environment fallbacks, flag values that word their own errors, the one-line
// usage error, the help text and the promslog logging flags.
package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
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

// PrintUsage writes a command's help to w.
func PrintUsage(w io.Writer, synopsis string, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "Usage: %s\n\nFlags (each falls back to %s<FLAG>, e.g. --redis.addr to LOCK_EXPORTER_REDIS_ADDR):\n%s",
		synopsis, EnvPrefix, fs.FlagUsagesWrapped(100))
}

// IsHelp reports whether a parse error is the request for help (-h, --help).
func IsHelp(err error) bool { return errors.Is(err, pflag.ErrHelp) }

// UsageMessage is err on one line, with any URL password redacted: a last guard, since a
// message may quote a flag or file value. The wording is the errors' own: flag values, the
// configuration and the commands each phrase theirs as "setting value: problem".
func UsageMessage(err error) string {
	return exporterconfig.RedactMessage(strings.Join(strings.Fields(err.Error()), " "))
}
