//go:build !unix

package store

import (
	"errors"
	"os"
)

var errNoLock = errors.New("receipt logs need flock, which this platform lacks")

func lockFile(*os.File) error   { return errNoLock }
func unlockFile(*os.File) error { return errNoLock }
func syncData(f *os.File) error { return f.Sync() }
