package runtime

import (
	"github.com/clawsec/claw/agent"
	"github.com/clawsec/claw/agent/tool"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/internal/approvals"
	"github.com/clawsec/claw/internal/broker"
	"github.com/clawsec/claw/internal/plugin"
	"github.com/clawsec/claw/internal/sop"
	"github.com/clawsec/claw/receipts"
)

// The shapes the command line prints, hands in or names, as the runtime
// gives them: cmd/claw imports no claw package but the runtime, the config
// and the terminal (internal/deptest holds it to that). Each is the
// package's own type or value, named once here; what works on them stays
// behind the runtime's functions.

// An agent turn and an autonomous run.
type (
	TurnRequest = agent.TurnRequest
	RunRequest  = agent.RunRequest
	RunTurn     = agent.RunTurn
)

// How an autonomous run stopped, and the error of an empty message.
const (
	StopCancelled = agent.StopCancelled
	StopErrors    = agent.StopErrors
)

var ErrEmptyMessage = agent.ErrEmptyMessage

// ToolNames are the tools an agent may call, for --tools-allow.
var ToolNames = tool.Names

// An action, the context a dry run judges it in, and the compiled policies.
type (
	Action      = gate.Action
	GateContext = gate.Context
	Engine      = gate.Engine
)

// Prefetch starts parsing the built-in policies while the config loads;
// OneShotGC holds the collector back for good in a process that makes one
// decision.
var (
	Prefetch  = gate.Prefetch
	OneShotGC = gate.OneShotGC
)

// The receipt signer, and a receipt as `claw receipt list` reads it.
type (
	Signer        = receipts.Signer
	ReceiptRecord = receipts.Record
	ReceiptBody   = receipts.Body
)

// The kinds of receipt.
const (
	ReceiptDecision     = receipts.TypeDecision
	ReceiptApproval     = receipts.TypeApproval
	ReceiptOutcome      = receipts.TypeOutcome
	ReceiptCheckpoint   = receipts.TypeCheckpoint
	ReceiptKeyRotated   = receipts.TypeKeyRotated
	ReceiptRecovery     = receipts.TypeRecovery
	ReceiptEstop        = receipts.TypeEstop
	ReceiptPolicyLoaded = receipts.TypePolicyLoaded
	ReceiptGrantAdded   = receipts.TypeGrantAdded
	ReceiptGrantRevoked = receipts.TypeGrantRevoked
)

// CheckKMS refuses a KMS key reference this claw cannot use yet.
var CheckKMS = receipts.CheckKMS

// The broker, its configuration, an approver, an outcome and the receipt
// log of the state changes.
type (
	Broker       = broker.Broker
	BrokerConfig = broker.Config
	Approver     = broker.Approver
	Outcome      = broker.Outcome
	ReceiptLog   = broker.Log
)

// StatusOK is the outcome of an action that ran and succeeded.
const StatusOK = broker.StatusOK

// DefaultArgon2id are the passphrase hash's parameters.
var DefaultArgon2id = broker.DefaultArgon2id

// The approvals client of a running claw serve.
type ApprovalsClient = approvals.Client

// An installed plugin and the plugin store.
type (
	InstalledPlugin = plugin.Installed
	PluginDir       = plugin.Store
)

// PluginOK is the status of an installed, unchanged plugin.
const PluginOK = plugin.StatusOK

// An SOP run, and the state of a cancelled one.
type SOPRunState = sop.Run

const SOPCancelled = sop.StateCancelled
