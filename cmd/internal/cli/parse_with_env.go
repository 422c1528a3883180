package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// ParseWithEnv parses args, then sets every flag not given from its environment variable. Its
// errors are one line each, in lockwatch's words: `--scan.batch-size "lots": not a number`,
// `LOCK_EXPORTER_SCAN_MAX_KEYS="many": not a number`, `unknown flag: --redis.adress`.
func ParseWithEnv(fs *pflag.FlagSet, args []string, getenv func(string) string) error {
	if err := fs.Parse(args); err != nil {
		return flagError(err)
	}
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "help" || f.Name == "version" {
			return
		}
		err = setFromEnv(fs, f, getenv)
	})
	return err
}

// setFromEnv sets flag f from its environment variable, if that is set.
func setFromEnv(fs *pflag.FlagSet, f *pflag.Flag, getenv func(string) string) error {
	name := EnvName(f.Name)
	v := getenv(name)
	if v == "" {
		return nil
	}
	// A repeatable string flag takes a comma-separated list from the environment.
	parts := []string{v}
	if f.Value.Type() == "stringArray" {
		parts = strings.Split(v, ",")
	}
	for _, p := range parts {
		if err := fs.Set(f.Name, p); err != nil {
			var invalid *pflag.InvalidValueError
			if errors.As(err, &invalid) {
				err = invalid.Unwrap()
			}
			return fmt.Errorf("%s=%q: %w", name, v, err)
		}
	}
	return fs.SetAnnotation(f.Name, fromEnvAnnotation, []string{name})
}

// fromEnvAnnotation marks a flag that setFromEnv set, with its variable's name.
const fromEnvAnnotation = "lockwatch/from-env"

// FromEnv returns the environment variable flag took its value from, if it did (ParseWithEnv
// set it because the command line did not): a message about that value names the variable.
func FromEnv(fs *pflag.FlagSet, flag string) (string, bool) {
	f := fs.Lookup(flag)
	if f == nil || len(f.Annotations[fromEnvAnnotation]) == 0 {
		return "", false
	}
	return f.Annotations[fromEnvAnnotation][0], true
}

// Named words a flag's value for an error message by where it came from: its environment
// variable when ParseWithEnv set it from there (`LOCK_EXPORTER_NAMESPACE="jobs"`), else the flag
// (`--namespace "jobs"`; a value that is not a string prints bare: `--web.max-requests -1`).
func Named(fs *pflag.FlagSet, flag string, value any) string {
	if env, ok := FromEnv(fs, flag); ok {
		return fmt.Sprintf("%s=%q", env, fmt.Sprint(value))
	}
	return FlagNamed(flag, value)
}

// FlagNamed words a flag's value in an error: a string quoted (`--web.telemetry-path "m"`),
// anything else as it prints (`--web.max-connections -1`).
func FlagNamed(flag string, value any) string {
	if s, ok := value.(string); ok {
		return fmt.Sprintf("--%s %q", flag, s)
	}
	return fmt.Sprintf("--%s %v", flag, value)
}

// flagError words a pflag parse error from its fields, so pflag's own phrasing never reaches
// the user: the flag and the value given, then the value's own error (see the Value types).
// Help (pflag.ErrHelp) passes through for IsHelp.
func flagError(err error) error {
	var (
		invalid  *pflag.InvalidValueError
		unknown  *pflag.NotExistError
		needsArg *pflag.ValueRequiredError
	)
	switch {
	case errors.As(err, &invalid):
		return fmt.Errorf("--%s %q: %w", invalid.GetFlag().Name, invalid.GetValue(), invalid.Unwrap())
	case errors.As(err, &unknown) && unknown.GetSpecifiedShortnames() != "":
		return fmt.Errorf("unknown flag: -%s", unknown.GetSpecifiedName())
	case errors.As(err, &unknown):
		return fmt.Errorf("unknown flag: --%s", unknown.GetSpecifiedName())
	case errors.As(err, &needsArg):
		return fmt.Errorf("--%s: needs a value", needsArg.GetSpecifiedName())
	}
	return err
}
