package memory_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/clawsec/claw/agent/memory"
)

func Example() {
	dir, _ := os.MkdirTemp("", "memory")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	redact := func(s string) string { return strings.ReplaceAll(s, "sk-example-secret", "[REDACTED]") }
	st, err := memory.Open(filepath.Join(dir, "memory.sqlite"), memory.WithRedactor(redact))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	conv, _ := st.NewConversation(ctx, "cli")
	st.Append(ctx, conv.ID,
		memory.Message{Role: memory.RoleUser, Content: "my key is sk-example-secret; rename the Aardvark adapter"},
		memory.Message{Role: memory.RoleAssistant, Content: "Renamed the Aardvark adapter."},
	)

	hits, _ := st.Search(ctx, `aardvark "adapter`, 10)
	for _, h := range hits {
		fmt.Printf("%s: %s\n", h.Message.Role, h.Snippet)
	}
	recent, _ := st.Recent(ctx, conv.ID, 1)
	fmt.Println(recent[0].Content)
	// Output:
	// assistant: Renamed the [Aardvark] [adapter].
	// user: my key is [REDACTED]; rename the [Aardvark] [adapter]
	// Renamed the Aardvark adapter.
}
