package exporter

import (
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
