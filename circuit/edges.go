// Package circuit finds a model's circuit as edges between its parts
// (docs/circuits.md): which sender (the token or position embedding, a
// head's output, an MLP's output) reaches which receiver (a head's query,
// key or value input, an MLP's input, the logits), each edge measured by
// path patching on graph's edge Net and estimated all at once by
// attribution patching; the smallest edge set that keeps a share of the
// metric; and models planted by construction, whose circuits are known.
package circuit

import (
	"fmt"

	"headlab/analysis"
	"headlab/graph"
)

// SenderKind is what a sender is.
type SenderKind int

const (
	SenderEmbed SenderKind = iota // the token embedding, tok_emb[token]
	SenderPos                     // the position embedding, pos_emb[position]
	SenderHead                    // a head's output through its rows of the output projection, o_h W_O^h
	SenderMLP                     // an MLP's output (with its second bias, the same on every run)
)

// Sender is one part of the model that writes into the residual stream.
type Sender struct {
	Kind  SenderKind
	Layer int
	Head  int
}

func (s Sender) String() string {
	switch s.Kind {
	case SenderEmbed:
		return "embed"
	case SenderPos:
		return "pos_embed"
	case SenderHead:
		return analysis.HeadName(s.Layer, s.Head)
	}
	return fmt.Sprintf("mlp%d", s.Layer)
}

// ReceiverName is r's name: L1H0.q, mlp0, logits.
func ReceiverName(r graph.Receiver) string {
	switch r.Kind {
	case graph.ReceiverMLP:
		return fmt.Sprintf("mlp%d", r.Layer)
	case graph.ReceiverLogits:
		return "logits"
	}
	return analysis.HeadName(r.Layer, r.Head) + "." + r.Kind.String()
}

// Edge is a sender's path into one receiver's input.
type Edge struct {
	From Sender
	To   graph.Receiver
}

func (e Edge) String() string { return e.From.String() + " -> " + ReceiverName(e.To) }

// stage is where a receiver sits in the forward pass: block l's
// attention 2l, its MLP 2l+1, the logits 2L. A receiver reads only
// senders of earlier stages.
func stage(r graph.Receiver) int {
	switch r.Kind {
	case graph.ReceiverMLP:
		return 2*r.Layer + 1
	case graph.ReceiverLogits:
		return 2 * r.Layer
	}
	return 2 * r.Layer
}

// senderStage is the stage after which s's output is written: the
// embeddings before every stage (-1), a head of block l at 2l, an MLP at
// 2l+1.
func senderStage(s Sender) int {
	switch s.Kind {
	case SenderHead:
		return 2 * s.Layer
	case SenderMLP:
		return 2*s.Layer + 1
	}
	return -1
}

// Senders lists c's senders in forward order: the embeddings, then block
// by block its heads and its MLP.
func Senders(c graph.Config) []Sender {
	ss := []Sender{{Kind: SenderEmbed}}
	if c.Positions {
		ss = append(ss, Sender{Kind: SenderPos})
	}
	for l := range c.Layers {
		for h := range c.Heads {
			ss = append(ss, Sender{Kind: SenderHead, Layer: l, Head: h})
		}
		if !c.NoMLP {
			ss = append(ss, Sender{Kind: SenderMLP, Layer: l})
		}
	}
	return ss
}

// Edges lists every edge of c: for each receiver (graph.Receivers'
// order), every sender of an earlier stage (Senders' order).
func Edges(c graph.Config) []Edge {
	var es []Edge
	for _, r := range graph.Receivers(c) {
		for _, s := range Senders(c) {
			if senderStage(s) < stage(r) {
				es = append(es, Edge{From: s, To: r})
			}
		}
	}
	return es
}
