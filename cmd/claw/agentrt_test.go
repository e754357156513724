package main

import (
	"strings"
	"testing"
)

// TestApproverNames: Discord's approver_ids are user ids, recorded as
// discord:ID; other channels' are names as written.
func TestApproverNames(t *testing.T) {
	if got := approverNames("discord", []string{"123", "456"}); strings.Join(got, ",") != "discord:123,discord:456" {
		t.Errorf("discord: %v", got)
	}
	if got := approverNames("bridge", []string{"cli:alice"}); strings.Join(got, ",") != "cli:alice" {
		t.Errorf("bridge: %v", got)
	}
}
