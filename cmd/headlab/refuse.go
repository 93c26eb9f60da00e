package main

import "headlab/internal/preflight"

// The checks made before any work starts (internal/preflight): every
// output path, and whether the run fits in memory. Their refusals exit 2.

type output = preflight.Output

var (
	fileOut       = preflight.File
	dirOut        = preflight.Dir
	checkpointOut = preflight.Checkpoint
	dbOut         = preflight.Database
	checkOutputs  = preflight.Outputs
	toStdout      = preflight.ToStdout
)
