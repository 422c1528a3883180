// Package keyspace follows lock keys through Redis keyspace notifications: it reads whether the
// server publishes the events a lock-key index needs (Probe, Parse), and subscribes to the
// events of the keys under given prefixes on a connection of its own (Subscriber), handing them
// over in the order Redis published them.
//
// Keyspace notifications are pub/sub messages: Redis sends each one once, to the connections
// subscribed at that instant. A subscriber that loses its connection has lost messages for good,
// so it never reconnects: it reports itself lost, and its owner rebuilds what it follows.
package keyspace
