package deploytest

import (
	"strings"
	"testing"

	"github.com/lockwatch/lockwatch/internal/testharness/testkit"
)

// podmanRunNeeds are what a documented `podman run` of the image must carry, each with what
// happens without it (both seen with podman 4.3.1 and runc 1.1.5, as root in a container).
var podmanRunNeeds = []struct {
	part    string
	without string
}{
	{"--ulimit nofile=", "runc create failed: … error setting rlimit type 7: operation not permitted"},
	{"--ulimit nproc=", "runc create failed: … error setting rlimit type 6: operation not permitted"},
	{"--redis.addr=host.containers.internal:", "the exporter dials localhost, which inside the container is the container itself"},
	{"--network slirp4netns:allow_host_loopback=true", "host.containers.internal is the bridge gateway, which a Redis on 127.0.0.1 refuses"},
	{"--add-host host.containers.internal:10.0.2.2", "the name resolves to the bridge gateway, not to slirp4netns' way to the host's loopback"},
}

// TestDocPodmanRunReachesRedis: every `podman run` of the image that a doc gives a reader to run
// carries the rlimit workaround and a Redis address the container reaches.
func TestDocPodmanRunReachesRedis(t *testing.T) {
	root := testkit.RepoRoot(t)
	found := 0
	for _, doc := range readDocs(t, root) {
		for _, cmd := range podmanRunCommands(doc.text) {
			if !strings.Contains(cmd.text, "ghcr.io/lockwatch/lock-exporter") {
				continue
			}
			found++
			for _, need := range podmanRunNeeds {
				if !strings.Contains(cmd.text, need.part) {
					t.Errorf("%s:%d: the podman run lacks %q (without it: %s)", doc.rel, cmd.number, need.part, need.without)
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("no doc has a `podman run` of ghcr.io/lockwatch/lock-exporter in a code block")
	}
}

// podmanRunCommands are the `podman run` commands of a doc's code blocks, each with its
// backslash-continued lines joined, numbered by its first line.
func podmanRunCommands(text string) []docLine {
	var cmds []docLine
	for _, block := range codeBlocks(text) {
		for i := 0; i < len(block); i++ {
			if !strings.HasPrefix(strings.TrimSpace(block[i].text), "podman run ") {
				continue
			}
			cmd := docLine{number: block[i].number}
			for ; i < len(block); i++ {
				line := strings.TrimSpace(block[i].text)
				cmd.text += strings.TrimSuffix(line, `\`) + " "
				if !strings.HasSuffix(line, `\`) {
					break
				}
			}
			cmd.text = strings.Join(strings.Fields(cmd.text), " ")
			cmds = append(cmds, cmd)
		}
	}
	return cmds
}

func TestPodmanRunCommands(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{
			name: "continued lines joined",
			text: "```sh\npodman run -d \\\n  -p 9866:9866 \\\n  IMAGE --flag\necho next\n```\n",
			want: []string{"podman run -d -p 9866:9866 IMAGE --flag"},
		},
		{
			name: "prose is not a command",
			text: "Run `podman run IMAGE` as you would.\n```sh\npodman load -i x.tar\n```\n",
			want: nil,
		},
		{
			name: "two commands",
			text: "```sh\npodman run A\npodman run B \\\n  C\n```\n",
			want: []string{"podman run A", "podman run B C"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range podmanRunCommands(tt.text) {
				got = append(got, c.text)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("podmanRunCommands = %q, want %q", got, tt.want)
			}
		})
	}
}
