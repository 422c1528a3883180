package exporterconfig

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// secret is a password as a user might paste it where an address or a file name belongs.
const secret = "Pq7-paste-SECRET-x9"

// addressShapes are every way an address can carry a password; each must be redacted wherever
// an address is printed.
var addressShapes = []string{
	"redis://user@h.example:6379?password=" + secret,
	"redis:/user:" + secret + "@h.example:6379",
	"user:" + secret + "@h.example:6379",
	"redis://user:" + secret + "@h.example:6379",
	"rediss://:" + secret + "@h.example:6379/0",
	"redis://user:" + secret + "@h.example:6379?db=1",
	"redis:user:" + secret + "@h.example",
	"h.example:6379?password=" + secret,
	"redis://user:p@ss" + secret + "@h.example:6379",
}

// TestNoPasswordInAnyError loads each address shape in every setting that takes addresses, and a
// password pasted as password_file in every setting that takes a file: the one-line error
// names the setting and never contains the password.
func TestNoPasswordInAnyError(t *testing.T) {
	type tc struct{ name, yaml, want string }
	var cases []tc
	for i, addr := range addressShapes {
		q := fmt.Sprintf("%q", addr) // a YAML double-quoted scalar
		cases = append(cases,
			tc{fmt.Sprintf("addr/%d", i), "redis: {addr: " + q + "}\n", "redis.addr"},
			tc{fmt.Sprintf("cluster_addrs/%d", i), "redis: {cluster_addrs: ['x:1', " + q + "]}\n", "redis.cluster-addr"},
			tc{fmt.Sprintf("sentinel_addrs/%d", i), "redis: {sentinel_master: m, sentinel_addrs: [" + q + "]}\n", "redis.sentinel-addr"},
			tc{fmt.Sprintf("target addr/%d", i), "targets: [{name: t, addr: " + q + "}]\n", `target "t"`},
		)
	}
	for _, pasted := range []string{secret, "redis://u:" + secret + "@h:1", secret + "\n"} {
		q := fmt.Sprintf("%q", pasted)
		cases = append(cases,
			tc{"password_file " + q, "redis: {password_file: " + q + "}\n", "the file given in password_file"},
			tc{"sentinel_password_file " + q, "redis: {sentinel_master: m, sentinel_addrs: ['x:1'], sentinel_password_file: " + q + "}\n", "the file given in sentinel_password_file"},
			tc{"target password_file " + q, "targets: [{name: t, addr: 'x:1', password_file: " + q + "}]\n", "the file given in password_file"},
		)
	}
	dir := t.TempDir()
	cases = append(cases, tc{"password_file a directory", "redis: {password_file: '" + dir + "'}\n", "the file given in password_file: is a directory"})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Load(testkit.WriteFile(t, "c.yml", "namespaces: [{name: a, pattern: 'a:*'}]\n"+c.yaml))
			if err == nil {
				err = cfg.Validate()
			}
			if err == nil {
				_, err = cfg.NewClient()
			}
			if err == nil || !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v, want ErrInvalid", err)
			}
			msg := err.Error()
			if strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
				t.Errorf("error quotes the password or spans lines: %q", msg)
			}
			if !strings.Contains(msg, c.want) {
				t.Errorf("error %q, want it to name %q", msg, c.want)
			}
		})
	}
}

// TestRedactAddrAndMessage: the redaction helpers hide the password of every shape, alone and
// inside free text, and keep what locates the server.
func TestRedactAddrAndMessage(t *testing.T) {
	for _, addr := range addressShapes {
		got := RedactAddr(addr)
		if strings.Contains(got, secret) || !strings.Contains(got, "h.example") {
			t.Errorf("RedactAddr(%q) = %q", addr, got)
		}
		msg := RedactMessage(`line 2: cannot use "` + addr + `" as redis.addr; also ` + addr)
		if strings.Contains(msg, secret) || !strings.Contains(msg, "h.example") {
			t.Errorf("RedactMessage(...%q...) = %q", addr, msg)
		}
	}
	for _, plain := range []string{"h.example:6379", "redis://h.example:6379/2", "rediss://user@h.example:6380", "[::1]:6379"} {
		if got := RedactAddr(plain); got != plain {
			t.Errorf("RedactAddr(%q) = %q, want it unchanged", plain, got)
		}
	}
}
