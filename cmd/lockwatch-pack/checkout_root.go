package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

const modulePath = "github.com/lockwatch/lockwatch"

// checkoutRoot finds the lockwatch checkout the working directory is in, so `make generate` and
// `go run ./cmd/lockwatch-pack` from any subdirectory rewrite the committed files.
func checkoutRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside a lockwatch checkout; pass --out DIR")
		}
		dir = parent
	}
}

func isModuleRoot(goMod string) bool {
	data, err := os.ReadFile(goMod)
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "module" {
			return f[1] == modulePath
		}
	}
	return false
}
