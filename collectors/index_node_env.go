package collectors

import (
	"context"

	"github.com/lockwatch/lockwatch/collectors/internal/lifecycle"
	"github.com/lockwatch/lockwatch/collectors/internal/walk"
)

// nodeWalker walks one node's keyspace in a walk: the keyspace walk by which an index node
// builds its index and runs its backstop walk.
type nodeWalker interface {
	WalkNode(f *walk.Run, c walk.NodeClient)
}

// nodeEnv is what an indexNode is given by the Scanner that starts it: the Scanner's options,
// the key budget its index shares with the other masters' indexes, the clock of the replies its
// walks read, the walk itself, the context that ends when the Scanner closes, and the lock
// lifecycles its re-reads count.
//
// Locks: none; set when the node is made and never written after (budget and replies guard
// themselves).
type nodeEnv struct {
	opts    Options
	budget  *keyBudget
	replies *walk.ReplyClock
	walker  nodeWalker
	base    context.Context
	life    *lifecycle.Tracker // the indexed namespaces' lock lifecycles, shared by a cluster's masters
}

// indexEnv is what the Scanner gives each index node it starts; the key budget is made first.
func (ix *indexer) indexEnv() nodeEnv {
	return nodeEnv{opts: ix.opts, budget: ix.budget, replies: ix.walk.Replies(), walker: ix.walk, base: ix.base, life: ix.life}
}
