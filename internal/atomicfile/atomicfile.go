// Package atomicfile replaces a file so that a crash leaves either the
// old file or the new one, never a mix and never an empty file:
//
//	write a temporary file in the same directory, fsync it,
//	rename it over the target, fsync the directory
//
// The rename is atomic on POSIX file systems; the fsync of the file
// makes its bytes durable before the name points at them, and the
// fsync of the directory makes the new name itself durable.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile replaces path with data, with permissions perm. On any error
// path is left as it was and the temporary file is removed.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return WriteFileCheck(path, data, perm, nil)
}

// CheckError is returned by [WriteFileCheck] when check rejected the new
// file; Err is check's error.
type CheckError struct{ Err error }

func (e *CheckError) Error() string { return e.Err.Error() }
func (e *CheckError) Unwrap() error { return e.Err }

// WriteFileCheck is [WriteFile] that calls check with the name of the
// synced temporary file before it replaces path: a config that must
// load, say. If check fails, path is left as it was and the error is a
// [*CheckError].
func WriteFileCheck(path string, data []byte, perm fs.FileMode, check func(tmp string) error) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(name)
		}
	}()
	err = tmp.Chmod(perm)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if check != nil {
		if err := check(name); err != nil {
			return &CheckError{Err: err}
		}
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	renamed = true
	return SyncDir(dir)
}

// SyncDir fsyncs the directory dir, making the names created, renamed or
// removed in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("failed to sync directory: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("failed to sync directory: %w", err)
	}
	return nil
}
