package walk

// Namespace is what the walk needs of one configured namespace to sort keys into it: collectors
// builds one per namespace once, from its Options, in configuration order.
type Namespace struct {
	// Pattern is the namespace's SCAN MATCH glob.
	Pattern string
	// StringsOnly is true when the namespace counts string keys and nothing else.
	StringsOnly bool
	// ReadsHolders is true when the namespace declares an expected maximum hold, so the walk
	// reads the holder record of each of its keys.
	ReadsHolders bool
}
