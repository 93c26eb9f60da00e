package sweep

import (
	"syscall"
	"testing"
	"time"

	"headlab/inspect"
	"headlab/train"
)

// cpuSeconds is the CPU time this process has used, user and system.
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkMeasurements is one run of the default induction model (2,500
// steps) as a sweep stores it, without the measurements beyond the
// ablation table (--measure none) and with all of them and the ablation
// table by resample ablation, the most expensive method (--measure all
// --ablation resample), one after the other in each iteration. Metrics,
// per run: wall and CPU seconds of each, the analysis alone (the run's
// seconds less its training's), and the ratios all/none of the wall and
// CPU time, which the issue asks to stay at most 1.5. CPU time is the
// process's (training's batch sampling runs on other goroutines), steadier
// than wall time on a shared machine. Run it with -benchtime 1x:
//
//	go test -run '^$' -bench Measurements -benchtime 1x ./sweep
func BenchmarkMeasurements(b *testing.B) {
	c := train.Defaults("induction")
	p := Pair{Key: Key(c), Config: c}
	compareAnalyses(b, p, [2]Analysis{{}, {Ablation: inspect.AblateResample, Measure: AllMeasures()}}, [2]string{"none", "all"})
}

// compareAnalyses runs p once under each of two analyses in every
// iteration, one after the other, and reports each one's wall and CPU
// seconds and analysis seconds (the run's less its training's) per run,
// suffixed by its name, and the ratios second/first of wall and CPU time.
func compareAnalyses(b *testing.B, p Pair, analyses [2]Analysis, names [2]string) {
	var wall, cpu, analysis [2]float64
	for b.Loop() {
		for i, a := range analyses {
			start, used := time.Now(), cpuSeconds(b)
			o, err := RunOne(p, cpuPlatform(), a, nil)
			if err != nil || o.Record.Status != StatusOK {
				b.Fatalf("%v %+v", err, o.Record)
			}
			wall[i] += time.Since(start).Seconds()
			cpu[i] += cpuSeconds(b) - used
			analysis[i] += o.Record.Seconds - o.Record.TrainSeconds
		}
	}
	n := float64(b.N)
	for i, name := range names {
		b.ReportMetric(wall[i]/n, "wall-s-"+name)
		b.ReportMetric(cpu[i]/n, "cpu-s-"+name)
		b.ReportMetric(analysis[i]/n, "analysis-s-"+name)
	}
	b.ReportMetric(wall[1]/wall[0], "wall-ratio")
	b.ReportMetric(cpu[1]/cpu[0], "cpu-ratio")
}

// BenchmarkSignature is the atlas's cost (issue 39: a sweep with the
// atlas on costs at most 1.5 times one without): one run of the default
// induction model as a sweep stores it by default (--measure all), once
// without the signature and once with it, one after the other in each
// iteration. Metrics as BenchmarkMeasurements'; the ratios are
// with/without. Run it with -benchtime 1x (or 3x on a busy machine):
//
//	go test -run '^$' -bench Signature -benchtime 1x ./sweep
func BenchmarkSignature(b *testing.B) {
	c := train.Defaults("induction")
	p := Pair{Key: Key(c), Config: c}
	var without MeasureSet
	for _, m := range AllMeasures() {
		if m != MeasureSignature {
			without = append(without, m)
		}
	}
	compareAnalyses(b, p, [2]Analysis{{Measure: without}, {Measure: AllMeasures()}}, [2]string{"without", "with"})
}
