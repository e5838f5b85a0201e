//go:build fleet

package main

// The adapter between the pipeline's generator interface and
// pipeline/fleet. Remove the build tag above once pipeline/fleet is merged.

import (
	"context"

	"github.com/threadlab/threadlab/pipeline"
	"github.com/threadlab/threadlab/pipeline/fleet"
	"github.com/threadlab/threadlab/pipeline/load"
)

func init() {
	fleetDrive = func(ctx context.Context, agents []pipeline.Agent, plan load.Plan) (*load.Result, []pipeline.ClockOffset, error) {
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
}
