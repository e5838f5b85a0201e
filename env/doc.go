// Package env owns what threadlab knows about the machine a run happens on:
// the host check (is this machine fit to benchmark on, and what exact command
// would make it fit), the fingerprint (what machine, kernel, JDK and build
// produced these numbers) and CPU pinning.
//
// Data flow: the pipeline calls HostCheck and Collect once per run and saves
// the results as hostcheck.json and fingerprint.json next to the data; Compare
// tells diff and the report whether two runs came from comparable machines;
// Pin and Allowed place the target, the services and the load generator on CPU
// sets when a manifest asks for it.
//
// Everything is read from /proc and /sys through pure parsers (ParseCPUInfo,
// ParsePidStat, ParseProcStat, ParseMeminfo, ParseOSRelease, the cgroup
// parsers), each tested on recorded files in testdata/. A file that is missing
// or unreadable becomes an "unknown" check or a warning in the fingerprint,
// never a crash: containers and VMs hide different parts of /sys, and a
// benchmark should still run there and say what it could not see.
package env
