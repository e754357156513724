package estop

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestEngageReadClear(t *testing.T) {
	file := filepath.Join(t.TempDir(), FileName)
	if Engaged(file) || Read(file).Engaged {
		t.Fatal("engaged before Engage")
	}
	now := time.Date(2026, 11, 22, 2, 31, 0, 0, time.UTC)
	already, err := Engage(file, "cli:alice", "looping\non deploys", now)
	if err != nil || already {
		t.Fatalf("Engage = %v, %v; want a new stop", already, err)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("ESTOP file %v, %v; want mode 0600", fi, err)
	}
	want := State{Engaged: true, Since: "2026-11-22T02:31:00Z", By: "cli:alice", Reason: "looping on deploys"}
	if got := Read(file); got != want || !Engaged(file) {
		t.Fatalf("Read = %+v, want %+v", got, want)
	}
	// A second engage keeps the first one's details.
	if already, err := Engage(file, "serve:http", "other", now.Add(time.Hour)); err != nil || !already {
		t.Fatalf("second Engage = %v, %v; want already engaged", already, err)
	}
	if got := Read(file); got != want {
		t.Fatalf("after a second Engage, Read = %+v, want %+v", got, want)
	}
	if err := Clear(file); err != nil {
		t.Fatal(err)
	}
	if Engaged(file) {
		t.Fatal("engaged after Clear")
	}
	if err := Clear(file); err != nil {
		t.Fatalf("clearing a cleared stop: %v", err)
	}
}

func TestEngagedFailsClosed(t *testing.T) {
	dir := t.TempDir()
	// Anything at the path is a stop, even an empty directory.
	file := filepath.Join(dir, FileName)
	if err := os.Mkdir(file, 0o700); err != nil {
		t.Fatal(err)
	}
	if !Engaged(file) || !Read(file).Engaged {
		t.Fatal("a directory at the ESTOP path is not a stop")
	}
	// A path that cannot be looked at (its parent is a file) is a stop.
	notDir := filepath.Join(dir, "f")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !Engaged(filepath.Join(notDir, FileName)) {
		t.Fatal("a stop that cannot be looked at is not engaged")
	}
	if Engaged("") {
		t.Fatal("no file name is a stop")
	}
}

func TestEngageFails(t *testing.T) {
	_, err := Engage(filepath.Join(t.TempDir(), "missing", FileName), "cli", "", time.Now())
	if err == nil || errors.Is(err, ErrDetails) {
		t.Fatalf("Engage in a missing directory = %v, want a failure to engage", err)
	}
}
