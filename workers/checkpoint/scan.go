package checkpoint

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// scan lists dir's entries, parents before children, without following
// symbolic links: a job could point one at a file only the worker may read,
// and the worker must not upload that file as the job's. Anything that is
// not a file, a directory or a link (a socket, a device) is skipped.
func scan(dir string) ([]Entry, error) {
	var out []Entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := Entry{Path: filepath.ToSlash(rel), Mode: info.Mode().Perm()}
		switch {
		case info.Mode().IsDir():
			e.Kind = KindDir
		case info.Mode()&fs.ModeSymlink != 0:
			e.Kind = KindSymlink
			if e.Link, err = os.Readlink(p); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			e.Kind = KindFile
			e.Size = info.Size()
			e.ModTime = info.ModTime().UnixNano()
		default:
			return nil
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: scan %s: %w", dir, err)
	}
	return out, nil
}
