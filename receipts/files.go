package receipts

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/transparency-dev/merkle/rfc6962"
)

// Files in a receipt directory that readers look at.
const (
	// CheckpointFile holds the newest signed checkpoint note.
	CheckpointFile = "checkpoint"
	segmentSuffix  = ".jsonl"
)

// Entry identifies a durable receipt.
type Entry struct {
	Seq     uint64
	Hash    Hash
	TS      string
	Segment string
	Offset  int64
}

// Ref names the action a receipt belongs to.
type Ref struct {
	ActionID     string
	Conversation string
	Channel      string
	User         string
	// AutonomousRun is the autonomous run that took the action, if any.
	AutonomousRun string
	Run, Step     string // the workflow run and step, when a workflow acts
	// ParentAction is the delegate action whose sub-agent took the action.
	ParentAction string
}

// LeafHash is the RFC 6962 leaf hash of a receipt body.
func LeafHash(body []byte) []byte { return rfc6962.DefaultHasher.HashLeaf(body) }

// SegmentName is the file name of segment n (1-based).
func SegmentName(n int) string { return fmt.Sprintf("%06d%s", n, segmentSuffix) }

// Segments lists the segment files of dir in order.
func Segments(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if _, ok := SegmentNumber(e.Name()); ok && e.Type().IsRegular() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// SegmentNumber is the number of the segment file name (1-based), and
// whether name is one.
func SegmentNumber(name string) (int, bool) {
	s, ok := strings.CutSuffix(name, segmentSuffix)
	if !ok || len(s) != 6 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// LatestCheckpoint returns the newest signed checkpoint note written in dir.
func LatestCheckpoint(dir string) ([]byte, error) {
	f, err := os.Open(filepath.Join(dir, CheckpointFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxCheckpointBytes))
}
