package lease

// fenceKeyExpiry is the fence key's PX in ms: TTL + FenceRetention.
func (n *Namespace) fenceKeyExpiry() int64 {
	return (n.policy.TTL + n.policy.FenceRetention).Milliseconds()
}
