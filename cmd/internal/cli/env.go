package cli

import (
	"io"
	"os"
)

// Env is what every lockwatch command may touch of its process: its output, its environment
// and, for tests, the moment it starts serving. A command takes it as a value instead of
// reading os.Stdout and os.Getenv, so that tests run the command in-process with their own
// environment and read what it printed.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Listening, when set, receives the bound addresses once the command serves HTTP.
	Listening func(addrs []string)
}

// ProcessEnv is the Env of the running process: os.Stdout, os.Stderr and os.Getenv.
func ProcessEnv() Env {
	return Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
}
