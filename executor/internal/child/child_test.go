package child

import "testing"

// TestCheckThreadsRefusesUnconfined: the check a tool run in the child
// depends on fails in a process that is not confined (this test's).
func TestCheckThreadsRefusesUnconfined(t *testing.T) {
	if err := checkThreads(); err == nil {
		t.Fatal("checkThreads passed in an unconfined process")
	}
}
