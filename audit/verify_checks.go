package audit

import (
	"bytes"
	"encoding/base64"
	"fmt"

	"github.com/clawsec/claw/receipts"
	"github.com/transparency-dev/merkle/rfc6962"
)

// consume does the ordered checks for one receipt, one after another:
// log identity, sequence number, hash chain, signature, timestamp, Merkle
// tree (checkpoints and anchors), what its type means, and the counts.
func (v *verifier) consume(r *rec) {
	rep := v.rep
	rep.Receipts++
	at := Problem{File: r.file, Line: r.line}
	if r.torn && r.err != nil {
		w := at
		w.Kind, w.Msg = WarnTornTail, fmt.Sprintf("partial last line (%d bytes), never acknowledged; the next writer truncates it and records a recovery receipt", len(r.data))
		v.warn(w)
		rep.Receipts--
		return
	}
	if r.err != nil {
		p := at
		p.Kind, p.Msg = KindMalformed, r.err.Error()
		v.problem(p)
		return
	}
	b := &r.pl.Decoded
	at.Seq = b.Seq
	v.checkLogID(b, at)
	v.checkSeq(b, at)
	v.checkChain(r, at)
	v.checkSignature(r, at)
	v.checkTime(r, at)
	v.checkTree(r, at)
	v.checkType(r, at)
	if r.inRange {
		v.count(r)
	}
}

// checkLogID checks that the receipt belongs to the log of the first one.
func (v *verifier) checkLogID(b *receipts.Body, at Problem) {
	rep := v.rep
	if v.logID == "" {
		v.logID = b.Log
		rep.LogIDs = append(rep.LogIDs, b.Log)
		return
	}
	if b.Log != v.logID {
		p := at
		p.Kind, p.Expected, p.Found, p.Msg = KindOtherLog, v.logID, b.Log, "receipt belongs to another log"
		v.problem(p)
		if !contains(rep.LogIDs, b.Log) {
			rep.LogIDs = append(rep.LogIDs, b.Log)
		}
	}
}

// checkSeq checks that the sequence number is the next one: missing
// ranges, duplicates and reordering are problems.
func (v *verifier) checkSeq(b *receipts.Body, at Problem) {
	if !v.started {
		v.rep.FirstSeq = b.Seq
		if b.Seq != 1 {
			v.missing(at, 1, b.Seq-1)
		}
	} else {
		switch {
		case b.Seq == v.maxSeq+1:
		case b.Seq > v.maxSeq+1:
			v.missing(at, v.maxSeq+1, b.Seq-1)
		case b.Seq == v.maxSeq:
			p := at
			p.Kind, p.Msg = KindDuplicate, fmt.Sprintf("seq %d appears twice", b.Seq)
			v.problem(p)
		default:
			p := at
			p.Kind, p.Msg = KindOutOfOrder, fmt.Sprintf("seq %d after seq %d (reordered, duplicated or inserted)", b.Seq, v.maxSeq)
			v.problem(p)
		}
	}
	if b.Seq > v.maxSeq {
		v.maxSeq = b.Seq
	}
	v.rep.LastSeq = v.maxSeq
}

// checkChain checks that prev is the entry hash of the receipt before
// (the genesis value for seq 1).
func (v *verifier) checkChain(r *rec, at Problem) {
	b := &r.pl.Decoded
	if v.started || b.Seq == 1 {
		want := v.prev.String()
		if !v.started {
			want = receipts.GenesisPrev
		}
		if b.Prev != want {
			p := at
			p.Kind, p.Expected, p.Found = KindBrokenLink, want, b.Prev
			p.Msg = fmt.Sprintf("prev does not match the entry hash of the receipt before it: the receipt before seq %d was changed, removed or reordered, or this one was inserted", b.Seq)
			v.problem(p)
		}
	}
	v.prev = r.hash
	v.started = true
}

// checkSignature counts the key's use and reports a signature that does
// not verify, an unknown key, or a key used after it was rotated away.
func (v *verifier) checkSignature(r *rec, at Problem) {
	kid := r.pl.KID
	v.kidUse[kid]++
	if r.sig == sigUnknown {
		// A key may have been introduced by a rotation after the worker
		// took its snapshot of the ring.
		if ring := v.ring.Load(); ring.Has(kid) {
			r.sig = verifySig(ring, r.pl)
		}
	}
	p := at
	switch r.sig {
	case sigOK:
		v.rep.SignaturesOK++
		if s, ok := v.retired[kid]; ok && r.pl.Decoded.Seq > s {
			p.Kind, p.Found, p.Msg = KindRetiredKey, kid, fmt.Sprintf("signed by key %s after it was rotated away at seq %d", kid, s)
			v.problem(p)
		}
	case sigBad:
		p.Kind, p.Found, p.Msg = KindBadSignature, kid, fmt.Sprintf("signature does not verify with key %s: the receipt was changed", kid)
		v.problem(p)
	case sigUnknown:
		p.Kind, p.Found, p.Msg = KindUnknownKey, kid, fmt.Sprintf("signed by unknown key %s", kid)
		v.problem(p)
	}
}

// checkTime reports a timestamp earlier than one before it.
func (v *verifier) checkTime(r *rec, at Problem) {
	if !v.lastTS.IsZero() && r.ts.Before(v.lastTS) {
		p := at
		p.Kind, p.Expected, p.Found = KindTimeBack, v.lastTS.Format(receipts.TimeFormat), r.pl.Decoded.TS
		p.Msg = "timestamp goes backwards"
		v.problem(p)
	}
	if r.ts.After(v.lastTS) {
		v.lastTS = r.ts
	}
}

// checkTree adds the receipt to the Merkle tree. A checkpoint commits to
// the tree before its own leaf; an anchor of the tree's new size must
// have its root.
func (v *verifier) checkTree(r *rec, at Problem) {
	b := &r.pl.Decoded
	if b.Type == receipts.TypeCheckpoint {
		v.checkCheckpoint(r, at)
	}
	if err := v.rng.Append(r.leaf, nil); err != nil {
		p := at
		p.Kind, p.Msg = KindCheckpoint, "merkle: "+err.Error()
		v.problem(p)
	}
	as := v.bySize[v.rng.End()]
	if len(as) == 0 {
		return
	}
	root, _ := v.rng.GetRootHash(nil)
	for _, a := range as {
		a.reached = true
		if !bytes.Equal(root, a.root) {
			a.Result = "rewritten"
			a.Detail = fmt.Sprintf("the first %d receipts have root %s, the anchor says %s: receipts up to seq %d were rewritten", a.Size, base64.StdEncoding.EncodeToString(root), a.Root, b.Seq)
		}
	}
}

// checkType checks what the receipt's type means: a key rotation, a
// recovery (a warning), a policy digest, and the order of decisions,
// approvals and outcomes.
func (v *verifier) checkType(r *rec, at Problem) {
	b := &r.pl.Decoded
	switch b.Type {
	case receipts.TypeKeyRotated:
		v.checkRotation(r, at)
	case receipts.TypeRecovery:
		w := at
		w.Kind = WarnRecovery
		if rc := b.Recovery; rc != nil {
			w.Msg = fmt.Sprintf("writer recovered from a crash: removed %d torn bytes at %s:%d (%s)", rc.Bytes, rc.Segment, rc.Offset, rc.SHA256)
		} else {
			w.Msg = "recovery receipt"
		}
		v.warn(w)
	case receipts.TypePolicyLoaded:
		if b.Policy != nil && !v.digests[b.Policy.Digest] {
			v.digests[b.Policy.Digest] = true
			v.rep.PolicyDigests = append(v.rep.PolicyDigests, b.Policy.Digest)
		}
	}
	v.semantics(b, at)
}

// count adds a receipt of the requested time range to the report's
// counts and covered range.
func (v *verifier) count(r *rec) {
	rep, b := v.rep, &r.pl.Decoded
	rep.Counted++
	if rep.Covered.From.IsZero() || r.ts.Before(rep.Covered.From) {
		rep.Covered.From = r.ts
	}
	if r.ts.After(rep.Covered.To) {
		rep.Covered.To = r.ts
	}
	rep.ByType[string(b.Type)]++
	if b.Type == receipts.TypeDecision && b.Decision != nil {
		rep.ByDecision[b.Decision.Result]++
	}
	if b.Type == receipts.TypeOutcome && b.Outcome != nil {
		rep.ByOutcome[b.Outcome.Status]++
	}
}

func (v *verifier) checkCheckpoint(r *rec, at Problem) {
	c := r.pl.Decoded.Checkpoint
	fail := func(msg string, exp, found string) {
		p := at
		p.Kind, p.Msg, p.Expected, p.Found = KindCheckpoint, msg, exp, found
		v.problem(p)
		v.rep.Checkpoints.Failed++
	}
	if c == nil {
		fail("checkpoint receipt without a checkpoint", "", "")
		return
	}
	cb, _, err := receipts.OpenCheckpoint([]byte(c.Note), v.ring.Load())
	if err != nil {
		fail("checkpoint note: "+err.Error(), "", "")
		return
	}
	size := v.rng.End()
	root, _ := v.rng.GetRootHash(nil)
	if size == 0 {
		root = rfc6962.DefaultHasher.EmptyRoot()
	}
	switch {
	case cb.Origin != v.logID:
		fail("checkpoint is for another log", v.logID, cb.Origin)
	case cb.Size != size || c.Size != size:
		fail("checkpoint size does not match the receipts before it", fmt.Sprint(size), fmt.Sprint(cb.Size))
	case !bytes.Equal(cb.Root, root) || c.Root != base64.StdEncoding.EncodeToString(cb.Root):
		fail("checkpoint root does not match the receipts before it", base64.StdEncoding.EncodeToString(root), base64.StdEncoding.EncodeToString(cb.Root))
	default:
		v.rep.Checkpoints.Verified++
		v.rep.Checkpoints.LatestSeq = r.pl.Decoded.Seq
		v.rep.Checkpoints.LatestSize = cb.Size
		v.rep.Checkpoints.LatestRoot = base64.StdEncoding.EncodeToString(cb.Root)
	}
}

func (v *verifier) checkRotation(r *rec, at Problem) {
	b := &r.pl.Decoded
	k := b.Key
	fail := func(msg string) {
		p := at
		p.Kind, p.Msg = KindKeyRotation, msg
		v.problem(p)
	}
	if k == nil {
		fail("key_rotated receipt without key")
		return
	}
	if r.sig != sigOK {
		fail("key rotation not signed by a trusted key: new key " + k.NewKID + " not trusted")
		return
	}
	if r.pl.KID != k.OldKID {
		fail("key rotation signed by " + r.pl.KID + ", not by the old key " + k.OldKID)
		return
	}
	pubs, err := receipts.ParsePublicKeys([]byte(k.NewKey))
	if err != nil || len(pubs) != 1 {
		fail("key rotation: bad new public key")
		return
	}
	kid, err := receipts.KeyID(pubs[0])
	if err != nil || kid != k.NewKID {
		fail("key rotation: new key id does not match the new public key")
		return
	}
	sig, err := base64.StdEncoding.DecodeString(k.NewSig)
	if err != nil {
		fail("key rotation: bad new-key signature encoding")
		return
	}
	tmp, err := receipts.NewKeyRing(pubs[0])
	if err != nil || tmp.Verify(kid, receipts.RotationMessage(b.Log, b.Prev, k.OldKID, k.NewKID), sig) != nil {
		fail("key rotation: the new key's signature does not verify")
		return
	}
	ring := v.ring.Load().Clone()
	if _, err := ring.Add(pubs[0]); err != nil {
		fail("key rotation: " + err.Error())
		return
	}
	v.ring.Store(ring)
	if _, ok := v.trusted[kid]; !ok {
		v.trusted[kid] = "rotated"
	}
	v.retired[k.OldKID] = b.Seq
}

// isExecuted reports whether an outcome says the action ran: it finished,
// failed, timed out or was killed — including by the emergency stop, whose
// outcome then carries the exit status. ("delegated", from the agent
// hooks, means another program was told it may run it.)
func isExecuted(o *receipts.Outcome) bool {
	if o == nil {
		return false
	}
	switch o.Status {
	case "ok", "failed", "timeout", "killed":
		return true
	case "estop":
		return o.Exit != nil
	}
	return false
}

func (v *verifier) semantics(b *receipts.Body, at Problem) {
	switch b.Type {
	case receipts.TypeDecision:
		// Only actions that may still run are tracked, so memory follows
		// the actions in flight, not the length of the log. A denied
		// action that runs anyway has no state and is reported below.
		if b.Decision == nil || b.Decision.Result == "deny" {
			delete(v.actions, b.ActionID)
			return
		}
		st := &actionState{seq: b.Seq, decision: b.Decision.Result}
		if b.Action != nil {
			st.digest = b.Action.ActionSHA256
		}
		v.actions[b.ActionID] = st
	case receipts.TypeApproval:
		st := v.actions[b.ActionID]
		if st == nil {
			w := at
			w.Kind, w.Msg = WarnNoDecision, fmt.Sprintf("approval for action %s with no decision before it", b.ActionID)
			v.warn(w)
			return
		}
		if b.Approval == nil || b.Approval.Result != "approved" {
			delete(v.actions, b.ActionID)
			return
		}
		{
			if st.digest != "" && b.Approval.ActionSHA256 != st.digest {
				p := at
				p.Kind, p.Expected, p.Found = KindApproval, st.digest, b.Approval.ActionSHA256
				p.Msg = fmt.Sprintf("approval for action %s is bound to a different action", b.ActionID)
				v.problem(p)
				return
			}
			st.approved = true
		}
	case receipts.TypeOutcome:
		st := v.actions[b.ActionID]
		delete(v.actions, b.ActionID)
		if !isExecuted(b.Outcome) {
			return
		}
		if st == nil || !(st.decision == "allow" || st.approved) {
			p := at
			p.Kind = KindUnauthorized
			p.Msg = fmt.Sprintf("action %s ran (outcome %s) with no allow decision or approval before it", b.ActionID, b.Outcome.Status)
			v.problem(p)
		}
	}
}
