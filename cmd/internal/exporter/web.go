package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path"
	"regexp"
	"strings"

	"github.com/prometheus/exporter-toolkit/web"

	"github.com/lockwatch/lockwatch/cmd/internal/cli"
	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
)

// DefaultListenAddress is the exporter's port.
const DefaultListenAddress = ":9866"

// healthPath answers 200 while the process serves; whether Redis answers is lock_exporter_up.
const healthPath = "/-/healthy"

// Web says where and how the exporter serves HTTP.
type Web struct {
	// ListenAddresses are [host]:port values, each served.
	ListenAddresses []string
	// TelemetryPath is the metrics endpoint's path.
	TelemetryPath string
	// ConfigFile is an exporter-toolkit web configuration (TLS, basic auth); empty for none.
	ConfigFile string
	// EnableLifecycle serves POST ReloadPath (with Options.Reload). Off by default, as in
	// Prometheus: a reload rebuilds clients, so it is not for anyone who reaches the port.
	EnableLifecycle bool
	// MaxConnections caps the connections open at once; more are closed at accept. Zero means
	// DefaultMaxConnections.
	MaxConnections int
	// MaxRequests caps the scrapes (metrics path and /scrape) in flight; more are answered 503.
	// Zero means DefaultMaxRequests.
	MaxRequests int
	// Named words a setting's value in errors: where it came from, e.g.
	// `LOCK_EXPORTER_WEB_LISTEN_ADDRESS="9866"` for a value from the environment. Nil names the
	// flag: `--web.listen-address "9866"`.
	Named func(flag string, value any) string
}

// named is w.Named, or the flag's words.
func (w Web) named(flag string, value any) string {
	if w.Named != nil {
		return w.Named(flag, value)
	}
	return cli.FlagNamed(flag, value)
}

// caps are MaxConnections and MaxRequests with their defaults applied.
func (w Web) caps() (connections, requests int) {
	connections, requests = w.MaxConnections, w.MaxRequests
	if connections == 0 {
		connections = DefaultMaxConnections
	}
	if requests == 0 {
		requests = DefaultMaxRequests
	}
	return connections, requests
}

// Validate checks what can be checked before anything listens; each error names the setting.
func (w Web) Validate() error {
	if p := w.TelemetryPath; !plainPath(p) || p == healthPath || p == ReloadPath || p == ScrapePath {
		return fmt.Errorf("%s: want a clean absolute path without spaces or any of {}%%?#, other than %s, %s and %s", w.named("web.telemetry-path", w.TelemetryPath), healthPath, ReloadPath, ScrapePath)
	}
	if w.MaxConnections < 0 {
		return fmt.Errorf("%s: want a positive number (0: %d)", w.named("web.max-connections", w.MaxConnections), DefaultMaxConnections)
	}
	if w.MaxRequests < 0 {
		return fmt.Errorf("%s: want a positive number (0: %d)", w.named("web.max-requests", w.MaxRequests), DefaultMaxRequests)
	}
	if err := checkListenAddresses(w.ListenAddresses, w.named); err != nil {
		return err
	}
	if err := web.Validate(w.ConfigFile); err != nil {
		return fmt.Errorf("%s: %s", w.named("web.config.file", w.ConfigFile), webConfigError(err))
	}
	return nil
}

// plainPath reports whether p is a clean absolute URL path that http.ServeMux takes literally:
// it reads its argument as a pattern, where a space separates a method, braces are wildcards
// and "%" escapes, and it panics on a pattern it cannot parse or that conflicts with another.
// A query or fragment, or a path Go would clean (and redirect), would never be requested.
func plainPath(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c <= ' ' || c == 0x7f || strings.IndexByte("{}%?#", c) >= 0 {
			return false
		}
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && p != "/" {
		clean += "/"
	}
	return clean == p
}

// CheckListenAddresses refuses --web.listen-address values that can never be listened on, so
// that a typo is a usage error (exit 2) like any other bad flag value. What only the system can
// refuse when net.Listen runs — a port already taken, a host that is not local or does not
// resolve — stays a runtime failure (exit 1).
func CheckListenAddresses(addrs []string) error {
	return checkListenAddresses(addrs, cli.FlagNamed)
}

// checkListenAddresses is CheckListenAddresses naming each value with named.
func checkListenAddresses(addrs []string, named func(flag string, value any) string) error {
	const flag = "web.listen-address"
	if len(addrs) == 0 {
		// pflag turns an empty value into an empty list; serving on nothing is never meant.
		return fmt.Errorf("%s: want [host]:port, e.g. :9866", named(flag, ""))
	}
	for _, a := range addrs {
		_, port, err := net.SplitHostPort(a)
		if err != nil || port == "" {
			// An empty port would make net.Listen pick a random one; ":0" says so explicitly.
			return fmt.Errorf("%s: want [host]:port, e.g. :9866", named(flag, a))
		}
		// LookupPort accepts exactly the ports net.Listen does: 0 to 65535, or a service name
		// from /etc/services, read locally.
		if _, err := net.LookupPort("tcp", port); err != nil {
			return fmt.Errorf("%s: port %q: want a number from 0 to 65535", named(flag, a), port)
		}
	}
	return nil
}

// quotedValue is how the YAML parser quotes the start of a value it cannot read
// ("cannot unmarshal !!str `hunter2...` into web.Config").
var quotedValue = regexp.MustCompile("`[^`]*`")

// webConfigError is a web configuration file's error on one line and without the file's
// contents: a password file given to --web.config.file by mistake would otherwise have its
// first bytes printed.
func webConfigError(err error) string {
	return quotedValue.ReplaceAllString(exporterconfig.OneLine(err), "(a value, not shown)")
}

// webConfigLog is the handler of the logger exporter-toolkit serves with, and of the HTTP
// server's error log. exporter-toolkit reads --web.config.file again for every request (basic
// auth, headers) and every TLS handshake; once the file no longer parses it logs the YAML
// parser's error ("Unable to parse configuration" err=…, or the server's "http: TLS handshake
// error from …: …"), which quotes the start of the value it could not read, so a password file
// put in the web configuration's place would have its first bytes logged. Every message and
// string or error attribute that quotes a value or spans lines passes through webConfigError,
// the withholding of the start-up check, which also puts the YAML parser's error on one line;
// a record that had a value withheld names the file (file=…).
type webConfigLog struct {
	slog.Handler
	file string
}

// withWebConfigLog is logger with its handler wrapped in webConfigLog.
func withWebConfigLog(logger *slog.Logger, file string) *slog.Logger {
	return slog.New(webConfigLog{Handler: logger.Handler(), file: file})
}

func (h webConfigLog) Handle(ctx context.Context, r slog.Record) error {
	withheld := false
	clean := func(s string) string {
		withheld = withheld || quotedValue.MatchString(s)
		return withholdLogged(s)
	}
	out := slog.NewRecord(r.Time, r.Level, clean(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(cleanAttr(a, clean))
		return true
	})
	if withheld && h.file != "" {
		out.AddAttrs(slog.String("file", h.file))
	}
	return h.Handler.Handle(ctx, out)
}

// withholdLogged is s through webConfigError when it quotes a value or spans lines, else s.
func withholdLogged(s string) string {
	if !strings.ContainsAny(s, "`\n\r") {
		return s
	}
	return webConfigError(errors.New(s))
}

// cleanAttr applies clean to a's string or error value, and to those of a group's members.
func cleanAttr(a slog.Attr, clean func(string) string) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, clean(v.String()))
	case slog.KindGroup:
		members := v.Group()
		cleaned := make([]any, len(members))
		for i, m := range members {
			cleaned[i] = cleanAttr(m, clean)
		}
		return slog.Group(a.Key, cleaned...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, clean(err.Error()))
		}
	}
	return a
}

func (h webConfigLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	cleaned := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		cleaned[i] = cleanAttr(a, withholdLogged)
	}
	return webConfigLog{Handler: h.Handler.WithAttrs(cleaned), file: h.file}
}

func (h webConfigLog) WithGroup(name string) slog.Handler {
	return webConfigLog{Handler: h.Handler.WithGroup(name), file: h.file}
}
