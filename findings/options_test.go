package findings

import (
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestOptionsValidate: each setting out of range is refused naming its
// flag, --quick sets the small check's counts and refuses a flag it sets.
func TestOptionsValidate(t *testing.T) {
	good := Options{Seeds: 32, Small: 8, Atlas: DefaultAtlasSeeds, Scale: 1, Workers: 2, Loss: "next-token"}
	none := func(string) bool { return false }
	for _, c := range []struct {
		want string
		edit func(*Options)
	}{
		{"--seeds must be at least 1, got 0", func(o *Options) { o.Seeds = 0 }},
		{"--small-seeds must be at least 1, got -1", func(o *Options) { o.Small = -1 }},
		{"--atlas-seeds must be at least 0, got -1", func(o *Options) { o.Atlas = -1 }},
		{"--steps-scale must be in (0, 10], got 11", func(o *Options) { o.Scale = 11 }},
		{"--steps-scale must be in (0, 10], got 0", func(o *Options) { o.Scale = 0 }},
		{"--workers must be at least 1, got 0", func(o *Options) { o.Workers = 0 }},
		{"loss", func(o *Options) { o.Loss = "mse" }},
	} {
		o := good
		c.edit(&o)
		if err := o.Validate(none); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", o, err, c.want)
		}
	}
	o := good
	if err := o.Validate(none); err != nil || o != good {
		t.Fatalf("good options: %v, %+v", err, o)
	}
	o.Quick = true
	if err := o.Validate(none); err != nil || o.Seeds != 4 || o.Small != 2 || o.Atlas != 4 || o.Scale != 0.02 {
		t.Errorf("--quick: %v, %+v", err, o)
	}
	if len(o.Plan().Pairs()) == 0 || len(o.Plan().AtlasSeeds) != 4 {
		t.Errorf("--quick's plan: %d pairs, atlas %v", len(o.Plan().Pairs()), o.Plan().AtlasSeeds)
	}
	o = good
	o.Quick = true
	err := o.Validate(func(f string) bool { return f == "steps-scale" })
	if err == nil || err.Error() != "--quick sets --steps-scale; give one or the other" {
		t.Errorf("--quick --steps-scale: %v", err)
	}
}

// TestAddFlags: the flags' defaults are the published setting, each flag
// sets its field, and every flag --quick refuses is one of them.
func TestAddFlags(t *testing.T) {
	var o Options
	fs := pflag.NewFlagSet("reproduce", pflag.ContinueOnError)
	o.AddFlags(fs)
	if o.Seeds != 32 || o.Small != 8 || o.Atlas != DefaultAtlasSeeds || o.Scale != 1 || o.Workers != runtime.NumCPU() || o.Quick || o.Regime || o.Loss != "next-token" {
		t.Errorf("defaults %+v", o)
	}
	if err := fs.Parse([]string{"--seeds", "5", "--small-seeds", "3", "--atlas-seeds", "0", "--steps-scale", "0.5", "--workers", "7", "--regime", "--loss", "answers"}); err != nil {
		t.Fatal(err)
	}
	if want := (Options{Seeds: 5, Small: 3, Atlas: 0, Scale: 0.5, Workers: 7, Regime: true, Loss: "answers"}); o != want {
		t.Errorf("parsed %+v, want %+v", o, want)
	}
	for _, name := range quickFlags {
		if fs.Lookup(name) == nil {
			t.Errorf("--quick names --%s, which AddFlags does not declare", name)
		}
	}
}
