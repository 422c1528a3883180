package pack

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// RecordFile is the record of what the pack last wrote, in the output root: a line
// "SHA256  PATH" (sha256sum's format) per file. A file whose content differs from its line was
// changed by someone else since.
const RecordFile = ".lockwatch-pack.sum"

// recordHeader opens the record file.
const recordHeader = `# Written by lockwatch-pack: the sha256 of each file it wrote under this directory, the JSON
# dashboards included (JSON holds no comment saying it is generated). A file that no longer
# matches its line was edited, and the next run refuses to overwrite it (--force does).
`

// ErrHandEdited is returned by WriteGuarded for files it would overwrite although lockwatch-pack
// did not write their current content.
var ErrHandEdited = errors.New("not overwritten")

// WriteGuarded is Write for an output directory the user owns: it keeps RecordFile under root
// and refuses, changing nothing, to overwrite a file whose content the pack did not write there
// (a hand edit since the last run, or a same-named file of the user's before the first).
// force overwrites them all the same. Files the pack does not generate are never touched.
func WriteGuarded(root string, files []File, force bool, report io.Writer) (updated int, err error) {
	record, err := readRecord(root)
	if err != nil {
		return 0, err
	}
	if !force {
		if err := checkNoHandEdits(root, files, record); err != nil {
			return 0, err
		}
	}
	rec := File{Path: RecordFile, Data: recordOf(files)}
	recordSame, err := upToDate(root, rec)
	if err != nil {
		return 0, err
	}
	updated, err = Write(root, append(files[:len(files):len(files)], rec), report)
	if err == nil && !recordSame {
		updated-- // the count is of the pack's files
	}
	return updated, err
}

// checkNoHandEdits returns ErrHandEdited naming every file Write would replace whose content
// on disk is not what the record says the pack wrote.
func checkNoHandEdits(root string, files []File, record map[string]string) error {
	var edited []string
	for _, f := range files {
		old, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Path)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		switch sum, recorded := record[f.Path]; {
		case bytes.Equal(old, f.Data) || sum == sha256Hex(old):
		case recorded:
			edited = append(edited, f.Path+" changed since lockwatch-pack wrote it")
		default:
			edited = append(edited, f.Path+" was not written by lockwatch-pack")
		}
	}
	if len(edited) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s (see %s); keep the change in the pack configuration, a values file or an overlay, "+
		"or rerun with --force to overwrite", ErrHandEdited, strings.Join(edited, ", "), RecordFile)
}

// readRecord reads root's record file; none yet is an empty record.
func readRecord(root string) (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(root, RecordFile))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	record := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sum, path, ok := strings.Cut(line, "  ")
		if !ok {
			return nil, fmt.Errorf("%s: line %q is not \"SHA256  PATH\"; delete the file to start a new record", filepath.Join(root, RecordFile), line)
		}
		record[path] = sum
	}
	return record, sc.Err()
}

// recordOf is the record file for files, in their order.
func recordOf(files []File) []byte {
	var b bytes.Buffer
	b.WriteString(recordHeader)
	for _, f := range files {
		fmt.Fprintf(&b, "%s  %s\n", sha256Hex(f.Data), f.Path)
	}
	return b.Bytes()
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
