package exporterconfig

import "fmt"

// Describe names the Redis endpoints for log lines and error messages, never credentials.
func (r Redis) Describe() string {
	redacted := func(addrs []string) []string {
		out := make([]string, len(addrs))
		for i, a := range addrs {
			out[i] = RedactAddr(a)
		}
		return out
	}
	switch {
	case len(r.ClusterAddrs) > 0:
		return fmt.Sprintf("cluster %v", redacted(r.ClusterAddrs))
	case len(r.SentinelAddrs) > 0:
		return fmt.Sprintf("sentinel %v master %s", redacted(r.SentinelAddrs), r.SentinelMaster)
	}
	return RedactAddr(r.Addr)
}

// UsesTLS reports whether the section's addresses are rediss:// ones (false when they do not
// resolve: Validate says why).
func (r Redis) UsesTLS() bool {
	res, err := r.resolve()
	return err == nil && res.tls
}
