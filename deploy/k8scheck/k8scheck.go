// Package k8scheck reads deploy/'s Kubernetes manifests into Kubernetes'
// own Job type, refusing any field that type lacks, so that they are
// checked where no API server runs (kubectl apply --dry-run needs one).
// It is a module of its own, so that Kubernetes' packages weigh nothing
// on headlab's build.
package k8scheck

import (
	"errors"
	"fmt"
	"os"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Decode reads the Job manifest at path strictly, as the API server
// does with strict field validation: an unknown or misspelt field (names
// are case-sensitive, unlike encoding/json's, so restartpolicy is one), a
// duplicate key or a value of the wrong type is an error.
func Decode(path string) (*batchv1.Job, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSONStrict(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var job batchv1.Job
	strict, err := json.UnmarshalStrict(js, &job)
	if err == nil {
		err = errors.Join(strict...)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		return nil, fmt.Errorf("%s: %s %s, want batch/v1 Job", path, job.APIVersion, job.Kind)
	}
	return &job, nil
}
