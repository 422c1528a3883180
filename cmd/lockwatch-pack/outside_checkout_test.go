package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/pack"
	"github.com/lockwatch/lockwatch/cmd/lockwatch-pack/internal/packconfig"
)

// TestInstalledBinaryOutsideACheckout runs lockwatch-pack as `go install` leaves it: a binary,
// started in an empty directory far from any checkout, with a settings file and --out. It must
// write the whole pack (rules, both dashboard forms, manifests, the Helm chart) from what it
// carries, equal to the committed files for the default settings, and changed where the
// settings say for a settings file.
func TestInstalledBinaryOutsideACheckout(t *testing.T) {
	root, err := checkoutRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "lockwatch-pack")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := t.TempDir()
	run := func(args ...string) (string, string, error) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = work
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}

	// Default settings: the committed pack, file for file.
	if _, stderr, err := run("--out", "./default-pack"); err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	files, err := packFiles(packconfig.Default())
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if files[i].Data, err = os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Path))); err != nil {
			t.Fatal(err)
		}
	}
	if stale, err := pack.Stale(filepath.Join(work, "default-pack"), files); err != nil || len(stale) > 0 {
		t.Errorf("the installed binary wrote %v differently from the checkout (%v)", stale, err)
	}

	// A settings file, as the README shows.
	if err := os.WriteFile(filepath.Join(work, "my-pack.yml"), []byte("runbook_base_url: https://wiki.example.com/lockwatch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err := run("--config", "my-pack.yml", "--out", "./lockwatch-pack")
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(work, "lockwatch-pack", filepath.FromSlash(f.Path))); err != nil {
			t.Errorf("the pack lacks %s: %v", f.Path, err)
		}
	}
	for _, rel := range []string{"alerts/lockwatch-alerts.yml", "deploy/helm/lock-exporter/files/rules/lockwatch-alerts.yml", "deploy/kubernetes/prometheusrule.yaml"} {
		data, err := os.ReadFile(filepath.Join(work, "lockwatch-pack", rel))
		if err != nil || !bytes.Contains(data, []byte("https://wiki.example.com/lockwatch#")) {
			t.Errorf("%s does not carry the configured runbook URL (%v)", rel, err)
		}
	}
	if !strings.Contains(stdout, "files updated under ./lockwatch-pack") {
		t.Errorf("the report does not name the output directory:\n%s", stdout)
	}

	// Without --out there is no checkout to default to: exit 2, one line that says what to do.
	_, stderr, err = run("--config", "my-pack.yml")
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 2 {
		t.Errorf("without --out outside a checkout: %v, want exit status 2", err)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--out") {
		t.Errorf("stderr %q is not one line naming --out", stderr)
	}
}
