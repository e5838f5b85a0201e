package main

import "github.com/threadlab/threadlab/pipeline"

// fleetDrive runs the generators on a multi-host run's load hosts as one
// (pipeline/fleet.Drive). It is set by fleet_drive.go, which builds with
// the fleet package (build tag fleet until pipeline/fleet is merged; then
// the tag goes). While nil, a multi-host run generates its load on this
// machine and says so in its warnings.
var fleetDrive pipeline.DriveFunc
