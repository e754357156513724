package toolkind

import "testing"

// TestNamesDistinct checks that no two kinds share a name, which would
// make the gate decide one as the other.
func TestNamesDistinct(t *testing.T) {
	seen := map[Kind]bool{}
	for _, k := range []Kind{Unknown, Shell, FileRead, FileWrite, EditFile, FileList, HTTP, Time, MemorySearch, AskUser, YieldToUser, MCP, Plugin, Delegate} {
		if k == "" || seen[k] {
			t.Errorf("kind %q is empty or used twice", k)
		}
		seen[k] = true
	}
}
