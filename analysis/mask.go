package analysis

import "slices"

// Mask says which heads of a model are switched off: Mask[l][h] for head
// h of layer l. A head it does not hold (a nil Mask holds none) is on, as
// the model reads it (graph's Net.SetAblation). Every ablation mask
// headlab builds is made here: --ablate's (ParseHeads), a head switched
// off on top of others (With), a label's heads (a sweep's joint
// ablations), the viewer's clicks.
type Mask [][]bool

// NewMask is the mask of a model of layers x heads that switches off
// the heads base does (base may be nil, or smaller) and no other.
func NewMask(layers, heads int, base Mask) Mask {
	m := make(Mask, layers)
	for l := range m {
		m[l] = make([]bool, heads)
		if l < len(base) {
			copy(m[l], base[l])
		}
	}
	return m
}

// Clone is a copy of m.
func (m Mask) Clone() Mask {
	out := make(Mask, len(m))
	for l := range m {
		out[l] = slices.Clone(m[l])
	}
	return out
}

// With is a copy of m with head h of layer l switched off too; m must
// hold that head.
func (m Mask) With(l, h int) Mask {
	out := m.Clone()
	out[l][h] = true
	return out
}

// Off says whether m switches head h of layer l off.
func (m Mask) Off(l, h int) bool { return l < len(m) && h < len(m[l]) && m[l][h] }
