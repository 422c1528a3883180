package exporterconfig

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
)

// Duration is a time.Duration written as Go duration text ("10s", "1m30s") both in YAML and on
// the command line (it implements pflag.Value).
type Duration time.Duration

// UnmarshalYAML reports a bad value with its line, which yaml.v3 does not add to custom errors.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if n.Kind != yaml.ScalarNode || err != nil {
		return fmt.Errorf("line %d: invalid duration %q (want e.g. 10s, 1m30s)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// String formats the duration the way Set parses it.
func (d *Duration) String() string { return time.Duration(*d).String() }

// Set parses Go duration text.
func (d *Duration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q (want e.g. 10s, 1m30s)", s)
	}
	*d = Duration(v)
	return nil
}

// Type names the value in flag help.
func (d *Duration) Type() string { return "duration" }

// MarshalYAML writes the duration as the text UnmarshalYAML reads, so a Config built in code
// (the demo's) can be written as a configuration file.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }
