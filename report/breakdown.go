package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// CauseKeys are the idle causes as the JSON reports name them, in the order
// the reports list them; a breakdown holds "<key>_ns" and "<key>_share" for
// each. tracegap's cause table (internal/analyze) takes its keys from here.
var CauseKeys = [...]string{"in_sync", "after_sync", "input", "runtime", "host", "untraced", "stalled"}

// NumCauses is the number of idle causes.
const NumCauses = len(CauseKeys)

// members lists the JSON members of a BreakdownV1 in the order they are
// written, each with where its value lives. The per-cause members come from
// CauseKeys, so a new cause needs no change here.
func (b *BreakdownV1) members() []breakdownMember {
	var m []breakdownMember
	for c, k := range CauseKeys {
		m = append(m, breakdownMember{key: k + "_ns", ns: &b.Ns[c]})
	}
	m = append(m,
		breakdownMember{key: "below_min_gap_ns", ns: &b.BelowMinGapNs},
		breakdownMember{key: "idle_ns", ns: &b.IdleNs})
	for c, k := range CauseKeys {
		m = append(m, breakdownMember{key: k + "_share", share: &b.Share[c]})
	}
	return append(m,
		breakdownMember{key: "sync_share", share: &b.SyncShare},
		breakdownMember{key: "below_min_gap_share", share: &b.BelowMinGapShare},
		breakdownMember{key: "idle_share", share: &b.IdleShare})
}

// breakdownMember is one member of a flat object whose members follow the
// cause table: an integer (ns), a float (share) or a string.
type breakdownMember struct {
	key   string
	ns    *int64
	share *float64
	str   *string
}

// MarshalJSON writes the breakdown as one flat object.
func (b BreakdownV1) MarshalJSON() ([]byte, error) { return marshalMembers(b.members()) }

// UnmarshalJSON reads the object MarshalJSON writes. A member it does not
// know is an error: the breakdown is part of the documented contract.
func (b *BreakdownV1) UnmarshalJSON(data []byte) error {
	*b = BreakdownV1{}
	return unmarshalMembers(data, b.members(), "idle breakdown")
}

// members lists the JSON members of a WaitSplitV1: the idle causes (from
// the cause table), then compute, late, total and doing.
func (w *WaitSplitV1) members() []breakdownMember {
	var m []breakdownMember
	for c, k := range CauseKeys {
		m = append(m, breakdownMember{key: k + "_ns", ns: &w.Ns[c]})
	}
	return append(m,
		breakdownMember{key: "compute_ns", ns: &w.ComputeNs},
		breakdownMember{key: "late_ns", ns: &w.LateNs},
		breakdownMember{key: "total_ns", ns: &w.TotalNs},
		breakdownMember{key: "doing", str: &w.Doing})
}

// MarshalJSON writes the wait split as one flat object.
func (w WaitSplitV1) MarshalJSON() ([]byte, error) { return marshalMembers(w.members()) }

// UnmarshalJSON reads the object MarshalJSON writes; an unknown member is an
// error.
func (w *WaitSplitV1) UnmarshalJSON(data []byte) error {
	*w = WaitSplitV1{}
	return unmarshalMembers(data, w.members(), "wait split")
}

// marshalMembers writes the members in order as one flat object.
func marshalMembers(ms []breakdownMember) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(strconv.Quote(m.key))
		buf.WriteByte(':')
		if m.ns != nil {
			buf.WriteString(strconv.FormatInt(*m.ns, 10))
			continue
		}
		var v []byte
		var err error
		if m.share != nil {
			v, err = json.Marshal(*m.share)
		} else {
			v, err = json.Marshal(*m.str)
		}
		if err != nil {
			return nil, err
		}
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// unmarshalMembers reads a flat object into the members; what names the
// object in errors.
func unmarshalMembers(data []byte, ms []breakdownMember, what string) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	byKey := map[string]breakdownMember{}
	for _, m := range ms {
		byKey[m.key] = m
	}
	for k, v := range raw {
		m, ok := byKey[k]
		if !ok {
			return fmt.Errorf("%s: unknown member %q", what, k)
		}
		var dst any = m.str
		switch {
		case m.ns != nil:
			dst = m.ns
		case m.share != nil:
			dst = m.share
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return fmt.Errorf("%s: member %q: %w", what, k, err)
		}
	}
	return nil
}
