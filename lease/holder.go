package lease

import (
	"fmt"
	"os"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// maxHolderLen bounds Options.Holder: it is written with every acquisition and shown on
// operators' terminals.
const maxHolderLen = 256

// defaultHolder names this process: "<host name> pid <pid>".
func defaultHolder() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	if len(host) > maxHolderLen/2 {
		host = host[:maxHolderLen/2]
	}
	return host + " pid " + strconv.Itoa(os.Getpid())
}

// checkHolder rejects descriptions an operator's terminal or a metric label should not get.
func checkHolder(h string) error {
	if h == "" || len(h) > maxHolderLen || !utf8.ValidString(h) {
		return fmt.Errorf("%w: Holder must be 1 to %d bytes of UTF-8", ErrInvalidPolicy, maxHolderLen)
	}
	for _, r := range h {
		if unicode.IsControl(r) {
			return fmt.Errorf("%w: Holder %q contains a control character", ErrInvalidPolicy, h)
		}
	}
	return nil
}
