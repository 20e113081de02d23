package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/tracegap/tracegap/analyze"
)

// breakdownMembers lists the JSON members of a BreakdownV1 in the order they
// are written, each with where its value lives. The per-cause members come
// from the cause table, so a new cause needs no change here.
func (b *BreakdownV1) members() []breakdownMember {
	var m []breakdownMember
	for _, c := range analyze.Causes() {
		m = append(m, breakdownMember{c.Key() + "_ns", &b.Ns[c], nil})
	}
	m = append(m,
		breakdownMember{"below_min_gap_ns", &b.BelowMinGapNs, nil},
		breakdownMember{"idle_ns", &b.IdleNs, nil})
	for _, c := range analyze.Causes() {
		m = append(m, breakdownMember{c.Key() + "_share", nil, &b.Share[c]})
	}
	return append(m,
		breakdownMember{"sync_share", nil, &b.SyncShare},
		breakdownMember{"below_min_gap_share", nil, &b.BelowMinGapShare},
		breakdownMember{"idle_share", nil, &b.IdleShare})
}

// breakdownMember is one member: an integer (ns) or a float (share).
type breakdownMember struct {
	key   string
	ns    *int64
	share *float64
}

// MarshalJSON writes the breakdown as one flat object.
func (b BreakdownV1) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range b.members() {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(strconv.Quote(m.key))
		buf.WriteByte(':')
		if m.ns != nil {
			buf.WriteString(strconv.FormatInt(*m.ns, 10))
			continue
		}
		v, err := json.Marshal(*m.share)
		if err != nil {
			return nil, err
		}
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads the object MarshalJSON writes. A member it does not
// know is an error: the breakdown is part of the documented contract.
func (b *BreakdownV1) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*b = BreakdownV1{}
	byKey := map[string]breakdownMember{}
	for _, m := range b.members() {
		byKey[m.key] = m
	}
	for k, v := range raw {
		m, ok := byKey[k]
		if !ok {
			return fmt.Errorf("idle breakdown: unknown member %q", k)
		}
		var err error
		if m.ns != nil {
			err = json.Unmarshal(v, m.ns)
		} else {
			err = json.Unmarshal(v, m.share)
		}
		if err != nil {
			return fmt.Errorf("idle breakdown: member %q: %w", k, err)
		}
	}
	return nil
}
