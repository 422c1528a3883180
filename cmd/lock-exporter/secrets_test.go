package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// pasted is a password as a user might paste it where an address or a file name belongs.
const pasted = "Zk4-pasted-PASSWORD-w2"

// TestNoPasswordInAnyOutput runs the server and inspect with each address shape that carries a
// password, given by flag, by environment and in the configuration file, and with the password
// pasted as password_file: exit 2, one line on stderr naming the setting, and the password
// nowhere in the output.
func TestNoPasswordInAnyOutput(t *testing.T) {
	shapes := []string{
		"redis://user@h.example:6379?password=" + pasted,
		"redis:/user:" + pasted + "@h.example:6379",
		"user:" + pasted + "@h.example:6379",
		"redis://user:" + pasted + "@h.example:6379",
	}
	type input struct {
		name string
		vars map[string]string
		args []string
	}
	var inputs []input
	for i, s := range shapes {
		file := testkit.WriteFile(t, fmt.Sprintf("addr%d.yml", i), fmt.Sprintf("redis: {addr: %q}\n", s))
		inputs = append(inputs,
			input{fmt.Sprintf("flag/%d", i), nil, []string{"--redis.addr", s}},
			input{fmt.Sprintf("env/%d", i), map[string]string{"LOCK_EXPORTER_REDIS_ADDR": s}, nil},
			input{fmt.Sprintf("cluster flag/%d", i), nil, []string{"--redis.cluster-addr", "x.example:1," + s}},
			input{fmt.Sprintf("sentinel flag/%d", i), nil, []string{"--redis.sentinel-addr", s, "--redis.sentinel-master", "m"}},
			input{fmt.Sprintf("file/%d", i), nil, []string{"--config.file", file}},
		)
	}
	pwFile := testkit.WriteFile(t, "pw.yml", fmt.Sprintf("redis: {password_file: %q}\n", pasted))
	inputs = append(inputs,
		input{"password_file in the file", nil, []string{"--config.file", pwFile}},
		input{"password file flag", nil, []string{"--redis.password-file", pasted}},
	)
	for _, in := range inputs {
		for _, cmd := range [][]string{nil, {"inspect"}} {
			name := in.name
			if cmd != nil {
				name = "inspect/" + name
			}
			t.Run(name, func(t *testing.T) {
				args := append(append(append([]string{}, cmd...), in.args...), "--namespace", "jobs=jobs:*")
				code, stdout, stderr := runCmd(t, in.vars, args...)
				if code != exitUsage {
					t.Errorf("exit %d, want %d; stderr %q", code, exitUsage, stderr)
				}
				if strings.Contains(stdout+stderr, pasted) {
					t.Errorf("the password is printed: stdout %q stderr %q", stdout, stderr)
				}
				if lines := strings.Count(strings.TrimSpace(stderr), "\n") + 1; lines != 1 {
					t.Errorf("stderr has %d lines, want 1: %q", lines, stderr)
				}
			})
		}
	}
}
