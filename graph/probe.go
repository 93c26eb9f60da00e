package graph

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"headlab/kernels"
)

// A probed Net (BuildProbed) is the evaluation Net with what the causal
// tools need (docs/causal.md): it keeps every block's activations after a
// run, and two of them, the residual stream entering a block and the
// heads' outputs, pass through a row-by-row gate and replacement,
// a' = a*gate + replacement, which the caller stages per model. Gates of 1
// and replacements of 0 change no bit of the logits; a gate of 0 with a
// replacement of 0 is zero ablation, with a head's mean or another
// example's output, mean or resample ablation, with a clean run's
// activation, activation patching. It also computes the logit lens: every
// block's incoming residual through the final LayerNorm and the
// unembedding.

// Site is an activation of a probed Net, [Batch*SeqLen][DModel] per model
// and block: kept after every run (Capture), and for ResidPre and HeadOut
// open to replacement (Intervention).
type Site int

const (
	// ResidPre is the residual stream that enters block l (after its
	// intervention).
	ResidPre Site = iota
	// HeadOut is block l's heads' outputs side by side, head h in columns
	// h*HeadDim..(h+1)*HeadDim-1, before the output projection (after its
	// intervention).
	HeadOut
	// ResidMid is the residual stream after block l's attention.
	ResidMid
	// MLPOut is what block l's MLP adds to the residual stream (its
	// second product and bias); an attention-only model has none.
	MLPOut
	sites
)

func (s Site) String() string {
	return [...]string{"resid_pre", "head_out", "resid_mid", "mlp_out"}[s]
}

// BuildProbed compiles the evaluation graph for batch sequences per model
// on the models of p with every activation kept and the residual stream
// and head outputs open to replacement. Its loss, logits, attention and
// hits are those of Build's evaluation Net, bit for bit, while no
// intervention is staged.
func BuildProbed(p *Block, batch int) (*Net, error) { return compileNet(p, batch, probedNet, nil) }

// probe is a probed Net's tensors: the interventions, on the device and
// staged on the host, and what it keeps.
type probe struct {
	S, rows, d, heads int
	// [site][layer], sites ResidPre and HeadOut: the gates and the
	// replacements, and their host copies, [S][rows*d].
	gate, repl         [2][]kernels.Tensor
	hostGate, hostRepl [2][][]float32
	dirty              [2]bool
	kept               [sites][]kernels.Tensor // [site][layer]
	lens               []kernels.Tensor        // [layer], [rows*Vocab]
	finalInv           kernels.Tensor          // the final LayerNorm's 1/sqrt(var+eps), [rows]
	edges              *edges                  // an edge Net's receivers (edges.go); nil in others
}

// probeNodes are a probed Net's nodes the builder needs later: each
// block's incoming residual (for the logit lens), the final LayerNorm and
// the lens logits.
type probeNodes struct {
	resid []*G.Node
	final *G.Node
	lens  G.Nodes
	grads G.Nodes // an edge Net's receiver gradients
}

// startProbe allocates a probed Net's tensors.
func (b *builder) startProbe() {
	c, n := b.n.Config, b.n
	p := &probe{S: n.Seeds, rows: b.rows, d: c.DModel, heads: c.Heads}
	size := b.rows * c.DModel
	for site := range 2 {
		for range c.Layers {
			p.gate[site] = append(p.gate[site], b.alloc(size))
			p.repl[site] = append(p.repl[site], b.alloc(size))
			p.hostGate[site] = append(p.hostGate[site], make([]float32, n.Seeds*size))
			p.hostRepl[site] = append(p.hostRepl[site], make([]float32, n.Seeds*size))
		}
	}
	for site := range sites {
		if site == MLPOut && c.NoMLP {
			continue // an attention-only model has no MLP to keep
		}
		for range c.Layers {
			p.kept[site] = append(p.kept[site], b.alloc(size))
		}
	}
	for range c.Layers {
		p.lens = append(p.lens, b.alloc(b.rows*c.Vocab))
	}
	n.probe, b.probe = p, &probeNodes{}
	if n.kind >= edgeNet {
		b.startEdges()
	}
}

// intervene is a*gate + replacement at site of block l, kept.
func (b *builder) intervene(site Site, l int, a *G.Node) *G.Node {
	if b.n.kind >= edgeNet {
		// An edge Net changes what receivers read instead (edges.go).
		return b.keep(site, l, a)
	}
	p, d := b.n.probe, b.n.Config.DModel
	name := fmt.Sprintf("blocks.%d.%s.", l, site)
	g := b.input(name+"gate", p.gate[site][l], b.rows, d)
	r := b.input(name+"replacement", p.repl[site][l], b.rows, d)
	return b.keep(site, l, add(mul(a, g), r))
}

// residual is the residual stream x entering block l: in a probed Net
// through its intervention, and kept.
func (b *builder) residual(l int, x *G.Node) *G.Node {
	if b.n.probe == nil {
		return x
	}
	x = b.intervene(ResidPre, l, x)
	b.probe.resid = append(b.probe.resid, x)
	return x
}

// probeHeads is block l's heads' output o in a probed Net: through its
// intervention, and kept.
func (b *builder) probeHeads(l int, o *G.Node) *G.Node { return b.intervene(HeadOut, l, o) }

// keep binds nd, the activation at site of block l, to the tensor a
// probed Net keeps it in; other Nets let the executor reuse its memory.
func (b *builder) keep(site Site, l int, nd *G.Node) *G.Node {
	if b.n.probe != nil {
		b.bound[nd] = b.n.probe.kept[site][l]
	}
	return nd
}

// final is the final LayerNorm's output x; a probed Net keeps its scale.
func (b *builder) final(x *G.Node) *G.Node {
	if b.n.probe != nil {
		b.probe.final = x
	}
	return x
}

// probeOutputs builds the logit lens of a probed Net: each block's
// incoming residual through the final LayerNorm and the unembedding; and
// in an edge Net the receivers' gradients of the metric of logits.
func (b *builder) probeOutputs(logits *G.Node) {
	if b.n.probe == nil {
		return
	}
	for l, x := range b.probe.resid {
		lens := b.unembed(layerNorm(x, b.param("ln_f.weight"), b.param("ln_f.bias")))
		b.bound[lens] = b.n.probe.lens[l]
		b.probe.lens = append(b.probe.lens, lens)
	}
	b.probe.grads = b.edgeGradients(logits)
}

// probeNodes are the outputs a probed Net adds: the lens logits, and an
// edge Net's receiver gradients.
func (b *builder) probeNodes() G.Nodes {
	if b.probe == nil {
		return nil
	}
	return append(append(G.Nodes(nil), b.probe.lens...), b.probe.grads...)
}

// probeCompiled finds, once the graph is compiled, the final LayerNorm's
// scale among the tensors the executor keeps for its gradient.
func (b *builder) probeCompiled() {
	if b.probe != nil && !b.linear {
		b.n.probe.finalInv = b.n.vm.auxOf(b.probe.final)[1]
	}
}

// clear sets model s's gates to 1 and replacements to 0.
func (p *probe) clear(s int) {
	size := p.rows * p.d
	for site := range 2 {
		for l := range p.hostGate[site] {
			g, r := p.hostGate[site][l][s*size:(s+1)*size], p.hostRepl[site][l][s*size:(s+1)*size]
			for i := range g {
				g[i] = 1
			}
			clear(r)
		}
		p.dirty[site] = true
	}
	if p.edges != nil {
		p.edges.clear(s, size)
	}
}

// ablate clears model s's interventions and zeroes the heads in off at
// every row.
func (p *probe) ablate(s int, off [][]bool) {
	p.clear(s)
	size := p.rows * p.d
	for l, row := range off {
		if l >= len(p.hostGate[HeadOut]) {
			break
		}
		dh := p.d / p.heads
		g := p.hostGate[HeadOut][l][s*size : (s+1)*size]
		for h, o := range row {
			if !o || h >= p.heads {
				continue
			}
			for r := range p.rows {
				clear(g[r*p.d+h*dh : r*p.d+(h+1)*dh])
			}
		}
	}
}

// upload sends the interventions that changed.
func (p *probe) upload(n *Net) error {
	for site := range 2 {
		if !p.dirty[site] {
			continue
		}
		for l := range p.gate[site] {
			if err := n.dev.Upload(p.gate[site][l], n.Seeds, p.hostGate[site][l]); err != nil {
				return err
			}
			if err := n.dev.Upload(p.repl[site][l], n.Seeds, p.hostRepl[site][l]); err != nil {
				return err
			}
		}
		p.dirty[site] = false
	}
	if p.edges != nil {
		return p.edges.upload(n)
	}
	return nil
}

// probed returns n's probe, or an error for a Net that is not probed.
func (n *Net) probed() (*probe, error) {
	if n.probe == nil {
		return nil, fmt.Errorf("graph: only a probed Net (BuildProbed) keeps activations and takes interventions")
	}
	return n.probe, nil
}

// Intervention returns model s's staged gate and replacement of site
// (ResidPre or HeadOut) in block l, [Batch*SeqLen][DModel] each, for the
// caller to fill: the activation a becomes a*gate + replacement in the
// next Run, which uploads them. They stay staged until changed, cleared
// (ClearInterventions) or overwritten by SetAblation.
func (n *Net) Intervention(s int, site Site, l int) (gate, repl []float32, err error) {
	p, err := n.probed()
	if err != nil {
		return nil, nil, err
	}
	if n.kind >= edgeNet {
		return nil, nil, fmt.Errorf("graph: an edge Net takes receivers' addends (ReceiverDelta), not interventions")
	}
	if site != ResidPre && site != HeadOut || l < 0 || l >= n.Config.Layers || s < 0 || s >= n.Seeds {
		return nil, nil, fmt.Errorf("graph: no intervention at %v of block %d of model %d", site, l, s)
	}
	size := p.rows * p.d
	p.dirty[site] = true
	return p.hostGate[site][l][s*size : (s+1)*size], p.hostRepl[site][l][s*size : (s+1)*size], nil
}

// ClearInterventions sets every gate of model s to 1 and every
// replacement to 0 (a negative s: every model).
func (n *Net) ClearInterventions(s int) error {
	p, err := n.probed()
	if err != nil {
		return err
	}
	for k := range n.Seeds {
		if s < 0 || k == s {
			p.clear(k)
		}
	}
	return nil
}

// Capture reads the last run's activation at site of block l,
// [Seeds][Batch*SeqLen][DModel], valid until the next read.
func (n *Net) Capture(site Site, l int) ([]float32, error) {
	p, err := n.probed()
	if err != nil {
		return nil, err
	}
	if site < 0 || site >= sites || l < 0 || l >= len(p.kept[site]) {
		return nil, fmt.Errorf("graph: no activation %v of block %d", site, l)
	}
	return n.read(p.kept[site][l])
}

// FinalScale reads the last run's final LayerNorm scale, 1/sqrt(var +
// eps) of every row, [Seeds][Batch*SeqLen], valid until the next read:
// the factor direct logit attribution freezes.
func (n *Net) FinalScale() ([]float32, error) {
	p, err := n.probed()
	if err != nil {
		return nil, err
	}
	if p.finalInv.Buf == nil {
		return nil, fmt.Errorf("graph: a linear edge Net has no final LayerNorm")
	}
	return n.read(p.finalInv)
}

// LensLogits reads the last run's logit lens of block l: the residual
// stream entering it (ResidPre) through the final LayerNorm and the
// unembedding, [Seeds][Batch*SeqLen][Vocab], valid until the next read.
// The lens after the last block is Logits.
func (n *Net) LensLogits(l int) ([]float32, error) {
	p, err := n.probed()
	if err != nil {
		return nil, err
	}
	if l < 0 || l >= len(p.lens) {
		return nil, fmt.Errorf("graph: no logit lens at block %d", l)
	}
	return n.read(p.lens[l])
}
