package exporter

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A web configuration file that does not parse is named in the error, but the error never
// quotes its contents: a password file given to --web.config.file by mistake (beside
// --redis.password-file, say) must not have its first bytes printed. The YAML parser quotes
// the start of a value it cannot read ("cannot unmarshal !!str `hunter2...`").
func TestWebConfigErrorQuotesNoContent(t *testing.T) {
	const secret = "hunter2secretpw"
	tests := []struct{ name, content string }{
		{"a password file", secret + "\n"},
		{"a password without newline", secret},
		{"a value where a mapping belongs", "basic_auth_users: " + secret + "\n"},
		{"a list where a mapping belongs", "tls_server_config: [" + secret + "]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "web.yml")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			w := Web{TelemetryPath: "/metrics", ListenAddresses: []string{"127.0.0.1:0"}, ConfigFile: path}
			err := w.Validate()
			if err == nil {
				t.Fatal("Validate accepted the file")
			}
			msg := err.Error()
			if strings.Contains(msg, secret[:4]) {
				t.Errorf("error quotes the file: %s", msg)
			}
			if !strings.Contains(msg, "--web.config.file") || !strings.Contains(msg, path) {
				t.Errorf("error does not name the flag and the file: %s", msg)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
		})
	}
}

// TestWebConfigLogWithholdsQuotedValues checks the handler exporter-toolkit logs through: a
// quoted value is withheld from the message and from string, error and grouped attributes, on
// one line, with the file named; a line with nothing to withhold is passed on as it was.
func TestWebConfigLogWithholdsQuotedValues(t *testing.T) {
	var buf bytes.Buffer
	logger := withWebConfigLog(slog.New(slog.NewTextHandler(&buf, nil)), "/etc/web.yml").With("component", "web", "pre", "`hunter2`")
	logger.Error("http: TLS handshake error from 127.0.0.1:1: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str `hunter2...`",
		"err", errors.New("line 1: `hunter2`"), "text", "`hunter2`", slog.Group("g", "v", "`hunter2`"))
	logger.Info("Listening on", "address", "127.0.0.1:9866")
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got:\n%s", buf.String())
	}
	if strings.Contains(lines[0], "hunter2") || strings.Count(lines[0], "(a value, not shown)") != 5 ||
		!strings.Contains(lines[0], "file=/etc/web.yml") || !strings.Contains(lines[0], "component=web") || strings.Contains(lines[0], `\n`) {
		t.Errorf("withheld line: %s", lines[0])
	}
	if !strings.HasSuffix(lines[1], `msg="Listening on" component=web pre="(a value, not shown)" address=127.0.0.1:9866`) {
		t.Errorf("untouched line: %s", lines[1])
	}
}
