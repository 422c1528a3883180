package cli

import (
	"errors"
	"strconv"

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
