package main

import (
	"context"

	"github.com/threadlab/threadlab/pipeline"
	"github.com/threadlab/threadlab/pipeline/fleet"
	"github.com/threadlab/threadlab/pipeline/load"
)

// fleetDrive runs the generators on a multi-host run's load hosts as one:
// the adapter between the pipeline's generator interface and
// pipeline/fleet.Drive (clock offsets measured, one agreed start, the
// results merged with their histograms added).
var fleetDrive pipeline.DriveFunc = func(ctx context.Context, agents []pipeline.Agent, plan load.Plan) (*load.Result, []pipeline.ClockOffset, error) {
	as := make([]fleet.Agent, len(agents))
	for i, a := range agents {
		as[i] = fleet.Agent{Name: a.Name, Stdin: a.Stdin, Stdout: a.Stdout}
	}
	res, offs, err := fleet.Drive(ctx, as, plan)
	out := make([]pipeline.ClockOffset, len(offs))
	for i, o := range offs {
		out[i] = pipeline.ClockOffset{Agent: o.Agent, Offset: o.Offset, RTT: o.RTT}
	}
	return res, out, err
}
