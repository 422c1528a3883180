package ruletests

import "fmt"

// The label values the scenarios use where the selectors leave them free.
const (
	libraryJob      = "app"
	libraryInstance = "app-1:8080"
	exporterJob     = "lock-exporter"
)

// clusterLabels are the cluster labels of cluster number i (1, 2, …): cluster="cluster-1".
func (g *gen) clusterLabels(i int) map[string]string {
	out := map[string]string{}
	for _, l := range g.cfg.ClusterLabels {
		out[l] = fmt.Sprintf("%s-%d", l, i)
	}
	return out
}

// libLabels are the labels of a lease-library series of namespace ns in cluster 1 that
// selectors.library selects.
func (g *gen) libLabels(ns string) map[string]string {
	base := with(g.clusterLabels(1), "job", libraryJob, "instance", libraryInstance, "lock_namespace", ns)
	out, err := g.lib.selected(base)
	if err != nil {
		g.fail(err)
	}
	return out
}

// libUnselected are label sets of namespace ns that selectors.library does not select, one
// for each of its matchers; none when the selector is empty.
func (g *gen) libUnselected(ns string) []map[string]string {
	base := with(g.clusterLabels(1), "job", libraryJob, "instance", libraryInstance, "lock_namespace", ns)
	out, err := g.lib.unselected(base)
	if err != nil {
		g.fail(err)
	}
	return out
}

// expLabels are the labels of an exporter series of the exporter instance in cluster c that
// selectors.exporter selects: of namespace ns, or of the exporter itself when ns is "".
func (g *gen) expLabels(c int, instance, ns string) map[string]string {
	out, err := g.exp.selected(g.expBase(c, instance, ns))
	if err != nil {
		g.fail(err)
	}
	if _, added := out["lock_namespace"]; ns == "" && added {
		// lock_namespace is a label of the metric, not of the target: the exporter's own
		// series never carry it, so no scenario can make them match.
		g.fail(fmt.Errorf("%s: %w for the exporter's own series (lock_exporter_up, …): they carry no lock_namespace, "+
			"so a selector on lock_namespace leaves LockExporterRedisDown, LockExporterAbsent and the other exporter alerts nothing to read",
			g.exp.path, ErrNoLabelValue))
	}
	return out
}

// expUnselected are such label sets that selectors.exporter does not select, one for each of
// its matchers; none when the selector is empty.
func (g *gen) expUnselected(c int, instance, ns string) []map[string]string {
	out, err := g.exp.unselected(g.expBase(c, instance, ns))
	if err != nil {
		g.fail(err)
	}
	return out
}

func (g *gen) expBase(c int, instance, ns string) map[string]string {
	base := with(g.clusterLabels(c), "job", exporterJob, "instance", instance)
	if ns != "" {
		base["lock_namespace"] = ns
	}
	return base
}
