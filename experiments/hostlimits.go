package experiments

// HostLimits is lint's check of the load against this host's limits (the
// hard open-file limit, hostProblems), without positions: Load reports the
// same problems with file:line:col. The run pre-flight
// (pipeline/preflight) asks it again, so a manifest that reaches
// pipeline.Run without Load is held to it too.
func (m *Manifest) HostLimits() Problems { return m.hostProblems(nil) }
