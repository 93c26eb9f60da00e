package k8scheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

var manifests = []string{"../kubernetes-job.yaml", "../kubernetes-job-gpu.yaml"}

func env(c corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

// The manifests decode strictly, and hold what a sweep's shards need.
func TestManifests(t *testing.T) {
	for _, path := range manifests {
		t.Run(filepath.Base(path), func(t *testing.T) {
			job, err := Decode(path)
			if err != nil {
				t.Fatal(err)
			}
			checkJob(t, job, strings.Contains(path, "gpu"))
		})
	}
}

func checkJob(t *testing.T, job *batchv1.Job, gpu bool) {
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Fatal("not an Indexed Job: its pods get no JOB_COMPLETION_INDEX")
	}
	if s.Completions == nil || *s.Completions < 1 || s.Parallelism == nil || *s.Parallelism > *s.Completions {
		t.Errorf("completions %v, parallelism %v", s.Completions, s.Parallelism)
	}
	// A failed shard restarts in its pod, resuming the database on its
	// emptyDir. The API server takes backoffLimitPerIndex only with
	// restartPolicy Never (its field's documentation), where a new pod
	// would start with an empty /work.
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyOnFailure {
		t.Errorf("restartPolicy %q, want OnFailure", pod.RestartPolicy)
	}
	if s.BackoffLimitPerIndex != nil && pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Error("backoffLimitPerIndex needs restartPolicy Never: the API server refuses this Job")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]

	// headlab reads the shard from JOB_COMPLETION_INDEX (Kubernetes
	// sets it) and JOB_COMPLETIONS (Kubernetes does not).
	if n, ok := env(c, "JOB_COMPLETIONS"); !ok || n != strconv.Itoa(int(*s.Completions)) {
		t.Errorf("JOB_COMPLETIONS %q, want spec.completions %d", n, *s.Completions)
	}
	if _, ok := env(c, "JOB_COMPLETION_INDEX"); ok {
		t.Error("JOB_COMPLETION_INDEX is set by hand: every pod would run the same shard")
	}

	// The shard is written on the pod's own disk and copied to the shared
	// volume through a temporary name.
	if strings.Join(c.Command, " ") != "sh -c" || len(c.Args) != 1 {
		t.Fatalf("command %q args %q, want sh -c SCRIPT", c.Command, c.Args)
	}
	script := c.Args[0]
	steps := regexp.MustCompile(`(?s)^set -e\n` +
		`headlab sweep .*--db /work/shard\.db\n` +
		`mkdir -p (/results/[\w-]+)\n` +
		`cp /work/shard\.db (/results/[\w-]+)/\.shard-\$JOB_COMPLETION_INDEX\.db\.tmp\n` +
		`mv (/results/[\w-]+)/\.shard-\$JOB_COMPLETION_INDEX\.db\.tmp (/results/[\w-]+)/shard-\$JOB_COMPLETION_INDEX\.db\n$`)
	m := steps.FindStringSubmatch(script)
	if m == nil {
		t.Fatalf("the script does not sweep to /work then copy and rename into /results:\n%s", script)
	}
	if m[1] != m[2] || m[2] != m[3] || m[3] != m[4] {
		t.Errorf("the script copies through folders %q", m[1:])
	}
	if strings.Contains(script, "--shard") {
		t.Error("the script names --shard: every pod would run the same one")
	}
	mounts := map[string]string{}
	for _, vm := range c.VolumeMounts {
		mounts[vm.MountPath] = vm.Name
	}
	vols := map[string]corev1.VolumeSource{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v.VolumeSource
	}
	if v, ok := vols[mounts["/work"]]; !ok || v.EmptyDir == nil {
		t.Error("/work is not an emptyDir (the pod's local disk)")
	}
	if v, ok := vols[mounts["/results"]]; !ok || v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName == "" {
		t.Error("/results is not a persistent volume claim (shared by every pod)")
	}

	// Requests that a scheduler can place, and a memory limit.
	req, lim := c.Resources.Requests, c.Resources.Limits
	cpu, mem := req[corev1.ResourceCPU], req[corev1.ResourceMemory]
	if cpu.IsZero() || mem.IsZero() {
		t.Errorf("requests cpu %v memory %v: both are needed", cpu.String(), mem.String())
	}
	if l, ok := lim[corev1.ResourceMemory]; !ok || l.Cmp(mem) < 0 {
		t.Errorf("memory limit %v below the request %v", l.String(), mem.String())
	}
	if gpu {
		if g := lim["nvidia.com/gpu"]; g.Value() != 1 {
			t.Errorf("nvidia.com/gpu limit %v, want 1", g.String())
		}
		if caps, _ := env(c, "NVIDIA_DRIVER_CAPABILITIES"); !strings.Contains(caps, "graphics") {
			t.Errorf("NVIDIA_DRIVER_CAPABILITIES %q lacks graphics: no EGL in the container", caps)
		}
		if !strings.Contains(script, "--backend gl") {
			t.Error("the GPU Job does not run --backend gl")
		}
		return
	}
	// A CPU pod's workers and Go's threads match the CPUs it asks for.
	want := strconv.FormatInt(cpu.Value(), 10)
	if p, _ := env(c, "GOMAXPROCS"); p != want {
		t.Errorf("GOMAXPROCS %q, want the CPU request %s", p, want)
	}
	if !strings.Contains(script, "--workers "+want+" ") {
		t.Errorf("the sweep's --workers is not the CPU request %s", want)
	}
}

// A misspelt field anywhere fails the strict decode, with its name.
func TestMisspeltFieldFails(t *testing.T) {
	orig, err := os.ReadFile(manifests[0])
	if err != nil {
		t.Fatal(err)
	}
	for from, to := range map[string]string{
		"completionMode:":  "completionMod:",
		"restartPolicy:":   "restartpolicy:",
		"mountPath: /work": "mountpath: /work",
		"claimName:":       "claimname:",
		"requests:":        "request:",
	} {
		bad := strings.Replace(string(orig), from, to, 1)
		if bad == string(orig) {
			t.Fatalf("%q is not in %s", from, manifests[0])
		}
		p := filepath.Join(t.TempDir(), "job.yaml")
		if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Decode(p)
		if field := strings.TrimSuffix(strings.Fields(to)[0], ":"); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s for %s: %v, want an error naming it", to, from, err)
		}
	}
}
