package pack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Write puts files under root, creating directories as needed, and reports one line per file:
// "updated" for a file it wrote because its content changed or it did not exist, "unchanged" for
// one already up to date (left untouched, so its modification time stays). It returns how many
// it wrote. The files are meant to be committed and read by Prometheus, Grafana and kubectl, so
// they are world-readable like the rest of a checkout.
//
// Write is all or nothing as far as a file system allows: every changed file is first written
// to a temporary file beside its target, and only when all of them are written are they renamed
// into place. A failure before that (a read-only directory, a path that is a file, a full disk)
// removes the temporary files and the directories it created, and leaves every file as it was,
// so the rules of a new configuration never sit beside the dashboards of the old one. Each
// rename is atomic, so a Prometheus or Grafana reading the directory never sees half a file. A
// file that is a symbolic link stays one: the file it points at is replaced.
func Write(root string, files []File, report io.Writer) (updated int, err error) {
	type staged struct{ tmp, full string }
	var (
		pending []staged
		created []string // directories Write made, parents first
		lines   []string
	)
	defer func() {
		if err == nil {
			return
		}
		for _, p := range pending {
			_ = os.Remove(p.tmp)
		}
		for i := len(created) - 1; i >= 0; i-- {
			_ = os.Remove(created[i]) // only empty directories go
		}
		updated = 0
	}()
	for _, f := range files {
		same, err := upToDate(root, f)
		if err != nil {
			return 0, err
		}
		if same {
			lines = append(lines, fmt.Sprintf("unchanged %s\n", f.Path))
			continue
		}
		full := filepath.Join(root, filepath.FromSlash(f.Path))
		if fi, err := os.Lstat(full); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			// Renamed onto, the link would become a file: write where it points, as in place.
			if full, err = filepath.EvalSymlinks(full); err != nil {
				return 0, err
			}
		}
		dirs, err := mkdirAll(filepath.Dir(full))
		created = append(created, dirs...)
		if err != nil {
			return 0, err
		}
		perm := os.FileMode(0o644)
		if fi, err := os.Stat(full); err == nil {
			perm = fi.Mode().Perm() // replaced, a file keeps its mode, as written in place
		}
		tmp, err := writeTemp(full, f.Data, perm)
		if err != nil {
			return 0, err
		}
		pending = append(pending, staged{tmp, full})
		lines = append(lines, fmt.Sprintf("updated   %s (%d bytes)\n", f.Path, len(f.Data)))
	}
	for len(pending) > 0 {
		if err := os.Rename(pending[0].tmp, pending[0].full); err != nil {
			return 0, err
		}
		pending = pending[1:]
		updated++
	}
	for _, l := range lines {
		_, _ = io.WriteString(report, l)
	}
	return updated, nil
}

// mkdirAll is os.MkdirAll that returns the directories it created, parents first, so a failed
// Write can remove them again.
func mkdirAll(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(missing)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		// Those that exist now are Write's to remove.
		var made []string
		for _, d := range missing {
			if _, statErr := os.Lstat(d); statErr == nil {
				made = append(made, d)
			}
		}
		return made, err
	}
	return missing, nil
}

// writeTemp writes data to a new temporary file in full's directory with mode perm, and returns
// its name.
func writeTemp(full string, data []byte, perm os.FileMode) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(full), "."+filepath.Base(full)+".tmp-*")
	if err != nil {
		// Name the file the user asked for, not the temporary one.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", fmt.Errorf("write %s: %w", full, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
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
