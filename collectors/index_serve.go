package collectors

import (
	"errors"
	"slices"

	"github.com/lockwatch/lockwatch/collectors/internal/index"
	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// indexServe is what a node's index serves one scrape.
type indexServe struct {
	// walk is the mask of indexed namespaces the scrape must walk instead: all of them while no
	// complete index exists (before the first build, or after a refusal), and those past the
	// key budget.
	walk     uint64
	walkWhy  map[int]string
	err      error // Redis did not answer: the scrape's lock_exporter_up is 0
	results  map[int]index.ServedNamespace
	keyspace int64
	noIdle   bool
	// partial marks the first build's walk as seen at the scrape's deadline, when the build had
	// not finished (on a cluster: some master's), in results: served as a cut walk is (counts a
	// lower bound, scrape_complete 0).
	partial bool
	// walked (a cluster's scrape) names the namespaces in results whose figures are partly a
	// walk of the masters that could not serve them from their index, with that reason; the
	// walks' SCAN calls and keys scanned are scanCalls and keysScanned.
	walked                 map[int]string
	scanCalls, keysScanned int64
}

// errBuildTookTheDeadline is the error of a walked namespace in a scrape that the index's first
// build held until its deadline.
var errBuildTookTheDeadline = errors.New("not read: the scrape's deadline passed during the lock-key index's first build")

// buildingServe is a scrape's answer from w, the first build's walk as seen at the scrape's
// deadline: its namespaces are the node's, in bit order.
func buildingServe(w *walk.Result) indexServe {
	out := indexServe{walkWhy: map[int]string{}, results: map[int]index.ServedNamespace{}, partial: true}
	out.err, out.noIdle, out.keyspace = w.Err, !w.IdleTimeAvailable, w.Keyspace
	out.scanCalls, out.keysScanned = w.ScanCalls, w.KeysScanned
	for b, ns := range w.Namespaces {
		out.results[b] = index.ServedNamespace{NamespaceResult: ns}
	}
	return out
}

// walkAll sends the scrape's namespaces, all n of them, to the walk for why.
func (out indexServe) walkAll(n int, why string) indexServe {
	out.walk = uint64(1)<<n - 1
	for b := range n {
		out.walkWhy[b] = why
	}
	return out
}

// onlyResyncing reports whether p asks for a walk only because its master resyncs.
func onlyResyncing(p indexServe) bool {
	if p.walk == 0 || p.err != nil || p.partial {
		return false
	}
	for _, why := range p.walkWhy {
		if why != whyResyncing {
			return false
		}
	}
	return true
}

// indexCounts are the index figures a Result carries.
type indexCounts struct {
	resyncs                map[string]int64
	entries                int
	corrections, backstops int64
}

func (c *indexCounts) add(o indexCounts) {
	if c.resyncs == nil {
		c.resyncs = map[string]int64{}
	}
	for r, v := range o.resyncs {
		c.resyncs[r] += v
	}
	c.entries += o.entries
	c.corrections += o.corrections
	c.backstops += o.backstops
}

// walkOf is the walk of one master: which indexed namespaces (bits) it read, and what it saw.
type walkOf struct {
	mask uint64
	res  *walk.Result
}

// mergeServes combines the masters' answers (parts, in address order; namespaces by bit, each
// listing its k first keys) and the walks of the masters that could not serve some namespace
// from their index (walks, by part): Redis is down if any master did not answer, and the
// figures add up as one walk of every master would count them. A namespace read partly by a
// walk is named in walked with the first such master's reason.
func mergeServes(namespaces []walk.Namespace, k int, parts []indexServe, walks []walkOf) indexServe {
	out := indexServe{walkWhy: map[int]string{}, results: map[int]index.ServedNamespace{}, walked: map[int]string{}}
	if slices.ContainsFunc(parts, func(p indexServe) bool { return p.partial }) {
		return mergePartialServes(namespaces, k, parts)
	}
	for i, p := range parts {
		if out.err == nil {
			out.err = p.err
		}
		keyspace := p.keyspace
		out.noIdle = out.noIdle || p.noIdle
		if walks != nil && walks[i].res != nil {
			w := walks[i].res
			if !w.Up && out.err == nil {
				out.err = w.Err
			}
			if keyspace == 0 {
				keyspace = w.Keyspace // a master that refused tracking, or before its first build
			}
			out.noIdle = out.noIdle || !w.IdleTimeAvailable
			out.scanCalls += w.ScanCalls
			out.keysScanned += w.KeysScanned
		}
		out.keyspace += keyspace
	}
	for b, ns := range namespaces {
		first, indexed := true, false
		for i, p := range parts {
			r, ok := p.results[b]
			indexed = indexed || ok
			if !ok && walks[i].mask&(1<<b) != 0 && walks[i].res != nil {
				r.NamespaceResult, ok = namespaceOf(walks[i].res, ns.Name)
				if _, named := out.walked[b]; ok && !named {
					out.walked[b] = p.walkWhy[b]
				}
			}
			switch {
			case !ok:
			case first:
				out.results[b], first = r, false
			default:
				out.results[b] = index.MergeServedNamespace(out.results[b], r, k)
			}
		}
		if r, ok := out.results[b]; ok {
			r.Indexed = indexed
			out.results[b] = r
		}
	}
	return out
}

// namespaceOf is the result of the namespace named name in res.
func namespaceOf(res *walk.Result, name string) (walk.NamespaceResult, bool) {
	for _, r := range res.Namespaces {
		if r.Namespace.Name == name {
			return r, true
		}
	}
	return walk.NamespaceResult{}, false
}

// mergePartialServes is the scrape's answer while a first build still walks some master: the masters
// built so far and the walks in progress add up to a lower bound (partialBuild marks every
// namespace incomplete). A namespace some master cannot serve at all is not read this time.
// Idle time counts as unavailable only where a build's walk found it so.
func mergePartialServes(namespaces []walk.Namespace, k int, parts []indexServe) indexServe {
	out := indexServe{walkWhy: map[int]string{}, results: map[int]index.ServedNamespace{}, partial: true}
	for b, ns := range namespaces {
		out.results[b] = index.ServedNamespace{NamespaceResult: walk.NamespaceResult{Namespace: ns}}
	}
	for _, p := range parts {
		if out.err == nil {
			out.err = p.err
		}
		out.noIdle = out.noIdle || p.partial && p.noIdle
		out.keyspace += p.keyspace
		out.scanCalls += p.scanCalls
		out.keysScanned += p.keysScanned
		for b := range namespaces {
			merged := out.results[b]
			if r, ok := p.results[b]; ok {
				merged = index.MergeServedNamespace(merged, r, k)
			} else if p.walk&(1<<b) != 0 && merged.Err == nil {
				merged.Err = errBuildTookTheDeadline
			}
			out.results[b] = merged
		}
	}
	return out
}
