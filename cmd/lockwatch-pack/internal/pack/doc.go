// Package pack is the shape every part of lockwatch's monitoring pack is generated in, and the
// one writer that puts the parts on disk.
//
// A part of the pack (the rule files, the dashboards, the Kubernetes manifests) is a Generator:
// a pure function from the pack configuration to the Files it produces, each named by its path
// relative to the root of a checkout (alerts/…, dashboards/…, deploy/kubernetes/…). Write puts
// Files under a root and says which of them changed; Stale compares them with a root without
// writing, which is how the drift tests prove the committed files are the generator's output.
//
// The generators live in cmd/lockwatch-pack/internal/pack/rules, cmd/lockwatch-pack/internal/pack/dashboards and
// cmd/lockwatch-pack/internal/pack/manifests; cmd/lockwatch-pack lists them and writes their output. The pack's
// public interface is what those produce (the committed files), the lockwatch-pack command and
// its YAML settings (docs/pack.md), not a Go API: that is why all of this is internal.
package pack
