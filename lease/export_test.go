package lease

// SharedRedisAddr gives the external test package (the examples) the package's test server.
func SharedRedisAddr() string { return sharedAddr }
