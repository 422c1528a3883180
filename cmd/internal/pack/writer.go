package pack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write puts files under root, creating directories as needed, and reports one line per file:
// "updated" for a file it wrote because its content changed or it did not exist, "unchanged" for
// one already up to date (left untouched, so its modification time stays). It returns how many
// it wrote. The files are meant to be committed and read by Prometheus, Grafana and kubectl, so
// they are world-readable like the rest of a checkout.
func Write(root string, files []File, report io.Writer) (updated int, err error) {
	for _, f := range files {
		same, err := upToDate(root, f)
		if err != nil {
			return updated, err
		}
		if same {
			fmt.Fprintf(report, "unchanged %s\n", f.Path)
			continue
		}
		full := filepath.Join(root, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return updated, err
		}
		if err := os.WriteFile(full, f.Data, 0o644); err != nil {
			return updated, err
		}
		updated++
		fmt.Fprintf(report, "updated   %s (%d bytes)\n", f.Path, len(f.Data))
	}
	return updated, nil
}

// Stale returns the paths of the files whose copy under root is missing or differs, in the order
// given: what Write would update. Drift tests call it on the checkout.
func Stale(root string, files []File) ([]string, error) {
	var stale []string
	for _, f := range files {
		same, err := upToDate(root, f)
		if err != nil {
			return nil, err
		}
		if !same {
			stale = append(stale, f.Path)
		}
	}
	return stale, nil
}

// upToDate reports whether f's copy under root has f's content. A missing file is not up to
// date; any other read error is returned.
func upToDate(root string, f File) (bool, error) {
	old, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Path)))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return bytes.Equal(old, f.Data), nil
}
