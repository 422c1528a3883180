package exporterconfig

import (
	"errors"
	"fmt"

	"github.com/lockwatch/lockwatch/collectors"
)

// ErrInvalid is matched (errors.Is) by every configuration error.
var ErrInvalid = errors.New("invalid configuration")

// invalidError is a configuration error whose text is only the problem ("scan.top-k must be at
// most 100, got 101"): the commands print it after their name, and a "invalid configuration: "
// prefix would say nothing the exit status does not.
type invalidError struct{ err error }

func (e invalidError) Error() string        { return e.err.Error() }
func (e invalidError) Unwrap() error        { return e.err }
func (e invalidError) Is(target error) bool { return target == ErrInvalid }

// invalidf is fmt.Errorf for configuration errors.
func invalidf(format string, args ...any) error {
	return invalidError{fmt.Errorf(format, args...)}
}

// namespaceProblem is a collectors validation error's problem, without the collectors kind: the
// error it goes into is a configuration error already. collectors' validation errors have a
// Problem method (and match collectors.ErrInvalidOptions); their type is not exported.
func namespaceProblem(err error) string {
	var p interface{ Problem() string }
	if errors.Is(err, collectors.ErrInvalidOptions) && errors.As(err, &p) {
		return p.Problem()
	}
	return err.Error()
}
