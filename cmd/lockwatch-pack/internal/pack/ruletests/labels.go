package ruletests

import (
	"errors"
	"fmt"
	"maps"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// ErrNoLabelValue is returned when no label value satisfies a configured selector: the
// generated tests need series that it selects and series it does not. It is a configuration
// error, as such a selector selects nothing.
var ErrNoLabelValue = errors.New("no label value found")

// selector is one configured selector (selectors.library or selectors.exporter) as matchers.
type selector struct {
	path     string // its configuration key, for errors
	matchers []*labels.Matcher
}

func parseSelector(path, s string) (selector, error) {
	ms, err := packconfig.ParseSelector(s)
	if err != nil {
		return selector{}, fmt.Errorf("%s: %w", path, err)
	}
	return selector{path: path, matchers: ms}, nil
}

// selected returns base with the labels the selector constrains set so that it selects the
// series: a label keeps its value where that already matches, else gets one that does.
func (s selector) selected(base map[string]string) (map[string]string, error) {
	out := maps.Clone(base)
	for _, name := range s.constrained() {
		v, err := s.valueFor(name, base[name])
		if err != nil {
			return nil, err
		}
		if v == "" {
			delete(out, name)
		} else {
			out[name] = v
		}
	}
	return out, nil
}

// unselected returns label sets like selected's that the selector does not select, one for
// each of its matchers: each fails that matcher only, so a rule that lost any one matcher
// selects one of them. Their lock_namespace and instance (where base has them) get the number of
// the matcher, so they are distinct series. None when the selector is empty.
func (s selector) unselected(base map[string]string) ([]map[string]string, error) {
	var sets []map[string]string
	for i, m := range s.matchers {
		b := maps.Clone(base)
		for _, l := range []string{"lock_namespace", "instance"} {
			if v, ok := b[l]; ok {
				b[l] = fmt.Sprintf("%s-%d", v, i+1)
			}
		}
		out, err := s.selected(b)
		if err != nil {
			return nil, err
		}
		v, ok := failing(m)
		if !ok {
			return nil, fmt.Errorf("%s: %w that fails %s", s.path, ErrNoLabelValue, m)
		}
		if v == "" {
			delete(out, m.Name)
		} else {
			out[m.Name] = v
		}
		sets = append(sets, out)
	}
	return sets, nil
}

// constrained are the label names the selector matches on, sorted.
func (s selector) constrained() []string {
	var names []string
	for _, m := range s.matchers {
		if !slices.Contains(names, m.Name) {
			names = append(names, m.Name)
		}
	}
	slices.Sort(names)
	return names
}

// valueFor returns a value of label name that every matcher on it accepts: preferred when it
// does, else one built from the matchers ("" means the label is left out).
func (s selector) valueFor(name, preferred string) (string, error) {
	cands := []string{preferred}
	for _, m := range s.matchers {
		if m.Name != name {
			continue
		}
		switch m.Type {
		case labels.MatchEqual:
			cands = append(cands, m.Value)
		case labels.MatchRegexp:
			if w, ok := shortestMatch(m.Value); ok {
				cands = append(cands, w+preferred, preferred+w, w)
			}
		}
	}
	cands = append(cands, preferred+"-1", "lockwatch", "")
	for _, c := range cands {
		if s.accepts(name, c) && (c != "" || preferred == "") {
			return c, nil
		}
	}
	for _, c := range cands {
		if s.accepts(name, c) {
			return c, nil
		}
	}
	return "", fmt.Errorf("%s: %w for label %s", s.path, ErrNoLabelValue, name)
}

func (s selector) accepts(name, value string) bool {
	for _, m := range s.matchers {
		if m.Name == name && !m.Matches(value) {
			return false
		}
	}
	return true
}

// failing returns a value m does not accept ("" for an absent label).
func failing(m *labels.Matcher) (string, bool) {
	cands := []string{"unselected", "other", m.Value + "-other", ""}
	if m.Type == labels.MatchNotEqual {
		cands = append([]string{m.Value}, cands...)
	}
	if m.Type == labels.MatchNotRegexp {
		if w, ok := shortestMatch(m.Value); ok {
			cands = append([]string{w}, cands...)
		}
	}
	for _, c := range cands {
		if !m.Matches(c) {
			return c, true
		}
	}
	return "", false
}

// shortestMatch returns a short string the anchored regular expression re matches, as
// Prometheus anchors label regexes.
func shortestMatch(re string) (string, bool) {
	r, err := syntax.Parse("^(?:"+re+")$", syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if !writeShortest(&b, r.Simplify()) {
		return "", false
	}
	return b.String(), true
}

func writeShortest(b *strings.Builder, r *syntax.Regexp) bool {
	switch r.Op {
	case syntax.OpLiteral:
		b.WriteString(string(r.Rune))
	case syntax.OpCharClass:
		if len(r.Rune) == 0 {
			return false
		}
		b.WriteRune(r.Rune[0])
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('a')
	case syntax.OpCapture, syntax.OpPlus:
		return writeShortest(b, r.Sub[0])
	case syntax.OpRepeat:
		for range r.Min {
			if !writeShortest(b, r.Sub[0]) {
				return false
			}
		}
	case syntax.OpConcat:
		for _, sub := range r.Sub {
			if !writeShortest(b, sub) {
				return false
			}
		}
	case syntax.OpAlternate:
		return writeShortest(b, r.Sub[0])
	case syntax.OpNoMatch:
		return false
	}
	// Empty matches, anchors, word boundaries, star and quest write nothing.
	return true
}
