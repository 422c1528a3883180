package packconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads YAML overrides from path and applies them on top of Default(). See Parse.
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("pack config: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil {
		return Config{}, fmt.Errorf("pack config %s: %w", path, err)
	}
	return cfg, nil
}

// Parse applies YAML overrides on top of Default() and validates the result. Only the keys
// present change; a list given replaces the default list as a whole. Unknown keys, a second
// YAML document and invalid values are errors. Empty input yields Default().
func Parse(data []byte) (Config, error) {
	cfg := Default()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, oneLine(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return Config{}, errors.New("more than one YAML document")
	}
	if err := decodeDocument(&doc, &cfg); err != nil {
		return Config{}, err
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, withLine(&doc, err)
	}
	return cfg, nil
}

// oneLine flattens a multi-line yaml.v3 error so a bad file yields one clear line. Syntax
// errors come from here; errors about keys and values come from decodeDocument.
func oneLine(err error) error {
	return errors.New(strings.Join(strings.Fields(err.Error()), " "))
}

// YAML renders the configuration in the override format, so the output of one run can be edited
// and fed back with --config.
func (c Config) YAML() ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
