package exporterconfig

import (
	"gopkg.in/yaml.v3"
)

// DecodeNamespaces reads a namespaces: list as Load does and checks it as Validate does, so a
// file that embeds the list (the pack configuration) refuses what --config.file refuses, in the
// same words. A decoding error carries its line already; a namespace that does not validate gets
// the line of its entry.
func DecodeNamespaces(n *yaml.Node) ([]Namespace, error) {
	var list []Namespace
	if err := decodeStrict(n, &list); err != nil {
		return nil, invalidError{err}
	}
	i, err := checkNamespaces(list)
	if err != nil {
		return nil, invalidf("line %d: %v", entryLine(n, i), err)
	}
	return list, nil
}

// entryLine is the line of list item i of n, or of n itself where n is not a list.
func entryLine(n *yaml.Node, i int) int {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind == yaml.SequenceNode && i < len(n.Content) {
		return n.Content[i].Line
	}
	return n.Line
}
