package sop

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/clawsec/claw/agent/memory"
)

// BenchmarkStepSave is what a run adds to each step: the two saves
// (step running, step done), durable before the next step starts. The
// anchor, BenchmarkMemoryAppend, is one message appended to the memory
// database, which every agent turn pays several times; both on the same
// kind of file.
func BenchmarkStepSave(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "memory.sqlite")
	m, err := memory.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	st, err := OpenStore(path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	p, src := daily(b)
	r, err := st.Create(ctx, p, src)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; b.Loop(); i++ {
		k := i % len(r.Steps)
		r.Steps[k].Status = StepRunning
		if err := st.Save(ctx, r, k); err != nil {
			b.Fatal(err)
		}
		r.Steps[k].Status, r.Steps[k].Output = StepOK, "The workspace holds the daily-check SOP."
		if err := st.Save(ctx, r, k); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMemoryAppend(b *testing.B) {
	ctx := context.Background()
	m, err := memory.Open(filepath.Join(b.TempDir(), "memory.sqlite"))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	conv, err := m.NewConversation(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := m.Append(ctx, conv.ID, memory.Message{Role: memory.RoleUser, Content: "The workspace holds the daily-check SOP."}); err != nil {
			b.Fatal(err)
		}
	}
}
