package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/common/promslog"

	"github.com/lockwatch/lockwatch/cmd/internal/cli"
	"github.com/lockwatch/lockwatch/cmd/internal/demo"
	"github.com/lockwatch/lockwatch/cmd/internal/exporter"
	"github.com/lockwatch/lockwatch/cmd/internal/exporterconfig"
)

const synopsis = "lockwatch-demo [flags]"

// envRedisPassword is where the demo reads the password of a --redis.addr Redis: it has no
// password flag, and a password in the URL would show in process listings.
const envRedisPassword = cli.EnvPrefix + "REDIS_PASSWORD"

// urlHasPassword reports whether addr is a URL that carries a password.
func urlHasPassword(addr string) bool {
	if !strings.Contains(addr, "://") {
		return false
	}
	u, err := url.Parse(addr)
	if err != nil || u.User == nil {
		return false
	}
	_, ok := u.User.Password()
	return ok
}

// errHelpShown is parseFlags' answer to --help: the usage is printed and the command is done.
var errHelpShown = errors.New("help shown")

// flags are the demo's settings.
type flags struct {
	redisAddr   string
	listen      string
	duration    time.Duration
	statusEvery time.Duration
	logs        *promslog.Config
}

// parseFlags parses args with LOCK_EXPORTER_* fallbacks and checks every value before anything
// starts, so a typo does not first start a redis-server. Its errors are usage errors.
func parseFlags(e *cli.Env, args []string) (fl flags, err error) {
	fs := cli.NewFlagSet("lockwatch-demo")
	fs.StringVar(&fl.redisAddr, "redis.addr", "", "Redis to run the demo on (host:port or redis:// URL; its password goes in "+envRedisPassword+"); only keys under "+demo.DefaultPrefix+" are touched and removed on exit (default: start a redis-server from PATH on a free loopback port)")
	fs.StringVar(&fl.listen, "web.listen-address", "127.0.0.1:9866", "address to serve /metrics on")
	fs.Var((*exporterconfig.Duration)(&fl.duration), "duration", "stop after this long; 0s runs until Ctrl-C")
	fl.statusEvery = 5 * time.Second
	fs.Var((*exporterconfig.Duration)(&fl.statusEvery), "status.interval", "how often to print the status line")
	// warn shows the lease library's renew warnings and abandonments.
	fl.logs = cli.AddLogFlags(fs, "warn")
	if err := cli.ParseWithEnv(fs, args, e.Getenv); err != nil {
		if cli.IsHelp(err) {
			cli.PrintUsage(e.Stdout, synopsis, fs)
			return fl, errHelpShown
		}
		return fl, usage(err)
	}
	switch {
	case fs.NArg() > 0:
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case urlHasPassword(fl.redisAddr):
		err = fmt.Errorf("--redis.addr %q: has a password: give it in %s instead, which stays out of process listings", redactURL(fl.redisAddr), envRedisPassword)
	case fl.duration < 0:
		err = fmt.Errorf("--duration %q: must not be negative", fl.duration)
	case fl.statusEvery <= 0:
		err = fmt.Errorf("--status.interval %q: must be positive", fl.statusEvery)
	default:
		err = exporter.CheckListenAddresses([]string{fl.listen})
	}
	if err != nil {
		return fl, usage(err)
	}
	return fl, nil
}
