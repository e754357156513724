package serve

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// decisionBuckets are the upper bounds (seconds) of the
// claw_decision_seconds histogram.
var decisionBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}

// Metrics are the daemon's counters, written in the Prometheus text
// format by WriteTo. It is safe for concurrent use.
type Metrics struct {
	Conversations  atomic.Uint64
	Denials        atomic.Uint64
	ProviderErrors atomic.Uint64
	chainValid     atomic.Int32 // 1, 0, or -1 (unknown)

	mu        sync.Mutex
	toolCalls map[string]uint64
	buckets   []uint64
	sum       float64
	count     uint64
}

func newMetrics() *Metrics {
	m := &Metrics{toolCalls: map[string]uint64{}, buckets: make([]uint64, len(decisionBuckets))}
	m.chainValid.Store(-1)
	return m
}

// ToolCall counts one tool call by its status.
func (m *Metrics) ToolCall(status string) {
	if status == "" {
		status = "unknown"
	}
	m.mu.Lock()
	if _, ok := m.toolCalls[status]; ok || len(m.toolCalls) < 64 {
		m.toolCalls[status]++
	}
	m.mu.Unlock()
}

// ObserveDecision records how long one decision took.
func (m *Metrics) ObserveDecision(d time.Duration) {
	s := d.Seconds()
	m.mu.Lock()
	for i, b := range decisionBuckets {
		if s <= b {
			m.buckets[i]++
		}
	}
	m.sum += s
	m.count++
	m.mu.Unlock()
}

// SetChainValid records the result of the last chain verification.
func (m *Metrics) SetChainValid(ok bool) {
	if ok {
		m.chainValid.Store(1)
	} else {
		m.chainValid.Store(0)
	}
}

// WriteTo writes the metrics in the Prometheus text exposition format.
func (m *Metrics) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	p := func(format string, a ...any) { fmt.Fprintf(cw, format, a...) }
	p("# HELP claw_conversations_total Conversations started through the daemon.\n# TYPE claw_conversations_total counter\nclaw_conversations_total %d\n", m.Conversations.Load())
	m.mu.Lock()
	statuses := make([]string, 0, len(m.toolCalls))
	for s := range m.toolCalls {
		statuses = append(statuses, s)
	}
	sort.Strings(statuses)
	p("# HELP claw_tool_calls_total Tool calls by outcome status.\n# TYPE claw_tool_calls_total counter\n")
	for _, s := range statuses {
		p("claw_tool_calls_total{status=%q} %d\n", s, m.toolCalls[s])
	}
	p("# HELP claw_decision_seconds Time the gate took to decide an action.\n# TYPE claw_decision_seconds histogram\n")
	for i, b := range decisionBuckets {
		p("claw_decision_seconds_bucket{le=\"%g\"} %d\n", b, m.buckets[i])
	}
	p("claw_decision_seconds_bucket{le=\"+Inf\"} %d\nclaw_decision_seconds_sum %g\nclaw_decision_seconds_count %d\n", m.count, m.sum, m.count)
	m.mu.Unlock()
	p("# HELP claw_denials_total Tool calls denied by policy, a human, or the emergency stop.\n# TYPE claw_denials_total counter\nclaw_denials_total %d\n", m.Denials.Load())
	p("# HELP claw_provider_errors_total Turns that failed in the model provider.\n# TYPE claw_provider_errors_total counter\nclaw_provider_errors_total %d\n", m.ProviderErrors.Load())
	if v := m.chainValid.Load(); v >= 0 {
		p("# HELP claw_receipt_chain_valid 1 if the receipt log verified at the last check.\n# TYPE claw_receipt_chain_valid gauge\nclaw_receipt_chain_valid %d\n", v)
	}
	return cw.n, cw.err
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(b []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.err = err
	return n, err
}
