package packconfig

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Validate names a bad value by its YAML path ("alerts.abandonments.for: …"); the user's file
// also has a line for it. withLine puts that line after the path, as decodeDocument does for the
// errors it finds, so every error of the file reads "path (line N): …".

// validationPath is the path an error of Validate starts with: dotted keys and [i] indices.
var validationPath = regexp.MustCompile(`^([a-z0-9_]+(?:\.[a-z0-9_]+|\[\d+\])*): `)

// locatedError is a validation error with its line; it still unwraps to the original.
type locatedError struct {
	msg string
	err error
}

func (e *locatedError) Error() string { return e.msg }
func (e *locatedError) Unwrap() error { return e.err }

// withLine returns err with the line of its path in doc, or err unchanged when the path is not
// in the file (a default that another setting made invalid has no line to point at).
func withLine(doc *yaml.Node, err error) error {
	m := validationPath.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	line := lineOf(doc, m[1])
	if line == 0 {
		return err
	}
	return &locatedError{msg: fmt.Sprintf("%s (line %d): %s", m[1], line, strings.TrimPrefix(err.Error(), m[0])), err: err}
}

// pathStep matches one step of a path: a key, or an index.
var pathStep = regexp.MustCompile(`[a-z0-9_]+|\[\d+\]`)

// lineOf walks doc along path and returns the line of the value it ends at. When the file does
// not set that value (long: left at its default, shorter than the short: written), it is the
// line of the deepest setting on the path the file has; 0 when it has none.
func lineOf(doc *yaml.Node, path string) (line int) {
	n := doc
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	for i, step := range pathStep.FindAllString(path, -1) {
		if i > 0 {
			line = n.Line
		}
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		if idx, ok := strings.CutPrefix(step, "["); ok {
			i, _ := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			if n.Kind != yaml.SequenceNode || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			continue
		}
		if n.Kind != yaml.MappingNode {
			return line
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == step {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return n.Line
}
