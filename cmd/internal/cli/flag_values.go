package cli

import (
	"errors"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// IntVar defines an int flag like pflag's, whose bad values get this package's message ("not
// a number", "number out of range") rather than strconv's.
func IntVar(fs *pflag.FlagSet, p *int, name string, value int, usage string) {
	*p = value
	fs.Var((*intValue)(p), name, usage)
}

// BoolVar defines a bool flag like pflag's (--flag alone means true), whose bad values get this
// package's message.
func BoolVar(fs *pflag.FlagSet, p *bool, name string, value bool, usage string) {
	*p = value
	fs.VarPF((*boolValue)(p), name, "", usage).NoOptDefVal = "true"
}

type intValue int

// Set parses like pflag's int flags (base prefixes 0x, 0o, 0b allowed).
func (v *intValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, strconv.IntSize)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return errors.New("number out of range")
	case err != nil:
		return errors.New("not a number")
	}
	*v = intValue(n)
	return nil
}

func (v *intValue) String() string { return strconv.Itoa(int(*v)) }
func (v *intValue) Type() string   { return "int" }

type boolValue bool

func (v *boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	*v = boolValue(b)
	return nil
}

func (v *boolValue) String() string   { return strconv.FormatBool(bool(*v)) }
func (v *boolValue) Type() string     { return "bool" }
func (v *boolValue) IsBoolFlag() bool { return true }

// StringListVar defines a repeatable list flag: each use adds its comma-separated items, and the
// first use replaces the default, as with pflag's StringSlice. Items are split on commas alone,
// with no CSV quoting (an address never holds a comma), so a stray quote or an empty item stays
// an item and is judged where the items are validated: csv's wording never reaches the user.
func StringListVar(fs *pflag.FlagSet, p *[]string, name string, value []string, usage string) {
	*p = append([]string(nil), value...)
	fs.Var(&stringListValue{items: p}, name, usage)
}

type stringListValue struct {
	items   *[]string
	changed bool // set once: later uses append instead of replacing the default
}

func (v *stringListValue) Set(s string) error {
	var items []string
	if s != "" { // as with pflag's StringSlice, an empty value is an empty list
		items = strings.Split(s, ",")
	}
	if !v.changed {
		*v.items = nil
		v.changed = true
	}
	*v.items = append(*v.items, items...)
	return nil
}

// String is "" for an empty list, which pflag's help takes for a zero default and leaves out.
func (v *stringListValue) String() string {
	if len(*v.items) == 0 {
		return ""
	}
	return "[" + strings.Join(*v.items, ",") + "]"
}

func (v *stringListValue) Type() string { return "strings" }
