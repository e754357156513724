package broker

import (
	"github.com/clawsec/claw/executor"
	"github.com/clawsec/claw/gate"
	"github.com/clawsec/claw/receipts"
)

// egressReceipt is the outcome receipt's record of what an action did
// through the egress proxy (nil without an egress grant): every
// connection's destination, address, admission, bytes and end, never a
// path, query or header. The host and the reason come from the sandbox:
// they pass through red like every other text of a receipt.
func egressReceipt(r *executor.EgressReport, red func(string) string) *receipts.Egress {
	if r == nil {
		return nil
	}
	out := &receipts.Egress{Conns: make([]receipts.EgressConn, len(r.Conns)), Dropped: r.Dropped}
	for i, c := range r.Conns {
		out.Conns[i] = receipts.EgressConn{Method: c.Method, Host: red(c.Host), Port: c.Port, IP: c.IP,
			Admitted: c.Admitted, Reason: red(c.Reason), Up: c.Up, Down: c.Down, MS: c.MS, Close: c.Close}
	}
	return out
}

// egressGrant is network through the egress proxy to the destinations the
// gate judged and planned, and nothing else.
func (b *Broker) egressGrant(d gate.Decision) *executor.Egress {
	return &executor.Egress{Hosts: d.Sandbox.Network.Hosts, AllowPrivate: configList(b.cfg.Gate, "allow_private_cidrs")}
}
