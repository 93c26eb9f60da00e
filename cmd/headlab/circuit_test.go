package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"headlab/circuit"
)

// TestCircuitMatchesNumpy: numpy, running the exported model forward in
// float64 with every receiver's input its own (tools/causal_ref.py
// --circuit), reproduces within 1e-5 every edge's path-patching effect,
// the intact runs' logit difference and the circuit's faithfulness that
// circuit --json reports, noising and denoising; and circuit draws its
// figure.
func TestCircuitMatchesNumpy(t *testing.T) {
	run := trained(t, "induction", "--steps", "300")
	dir := t.TempDir()
	f := func(name string) string { return filepath.Join(dir, name) }
	for _, args := range [][]string{
		{"export", "--run", run, "--out", f("tl.safetensors")},
		{"dump", "--run", run, "--examples", "24", "--out", f("d.safetensors")},
	} {
		if code, _, errs := headlab(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
	}
	for _, dir := range []string{circuit.Noising, circuit.Denoising} {
		out := f(dir + ".json")
		writeOut(t, out, "circuit", "--run", run, "--json", "--examples", "24", "--direction", dir, "--png", f(dir+".svg"))
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var rep circuit.Report
		if err := json.Unmarshal(data, &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Edges) != 61 || len(rep.Circuit) == 0 || rep.Faithfulness < 0.9 || len(rep.Curve) != 62 {
			t.Errorf("%s: %d edges, circuit %v, faithfulness %.3f, curve of %d", dir, len(rep.Edges), rep.Circuit, rep.Faithfulness, len(rep.Curve))
		}
		if st, err := os.Stat(f(dir + ".svg")); err != nil || st.Size() == 0 {
			t.Errorf("%s: no figure: %v", dir, err)
		}
		code, ref := causalRef(t, "--weights", f("tl.safetensors"), "--dump", f("d.safetensors"), "--circuit", out)
		if code != 0 {
			t.Fatalf("%s: causal_ref.py: exit %d: %s", dir, code, ref)
		}
		if !strings.Contains(ref, `"circuit edge effect"`) || !strings.Contains(ref, `"circuit faithfulness"`) {
			t.Errorf("%s: the reference checked nothing: %s", dir, ref)
		}
	}
}

// TestCircuitRefusesBadInput: a threshold outside (0, 1], an unknown
// direction and a corruption the task lacks are refused in one line with
// exit 2, nothing written.
func TestCircuitRefusesBadInput(t *testing.T) {
	run := trained(t, "majority")
	png := filepath.Join(t.TempDir(), "c.png")
	for _, args := range [][]string{
		{"--threshold", "0"}, {"--threshold", "1.5"}, {"--threshold", "-0.2"}, {"--threshold", "NaN"},
		{"--direction", "sideways"}, {"--corruption", "first-half"},
	} {
		code, out, errs := headlab(t, append([]string{"circuit", "--run", run, "--png", png}, args...)...)
		if code != 2 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line", args, code, out, errs)
		}
		if _, err := os.Stat(png); err == nil {
			t.Errorf("%v: wrote the figure", args)
		}
	}
}

// TestCircuitGLAgreesWithCPU: on the GL device circuit reports every
// edge's path-patching effect and attribution within 1e-4 of the CPU's,
// and the same circuit.
func TestCircuitGLAgreesWithCPU(t *testing.T) {
	needGL(t)
	run := trained(t, "induction", "--steps", "300")
	reps := map[string]circuit.Report{}
	for _, be := range []string{"cpu", "gl"} {
		code, out, errs := headlab(t, "circuit", "--run", run, "--json", "--examples", "6", "--backend", be)
		var rep circuit.Report
		if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
			t.Fatalf("%s: exit %d, %v: %s", be, code, err, errs)
		}
		reps[be] = rep
	}
	c, g := reps["cpu"], reps["gl"]
	if strings.Join(c.Circuit, ",") != strings.Join(g.Circuit, ",") {
		t.Errorf("circuits differ: cpu %v, gl %v", c.Circuit, g.Circuit)
	}
	for i, e := range c.Edges {
		if d, a := e.Effect-g.Edges[i].Effect, e.Attribution-g.Edges[i].Attribution; d*d > 1e-8 || a*a > 1e-8 {
			t.Errorf("%s: cpu %.6f and %.6f, gl %.6f and %.6f", e.Edge, e.Effect, e.Attribution, g.Edges[i].Effect, g.Edges[i].Attribution)
		}
	}
}
