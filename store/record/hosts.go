package record

import "encoding/json"

// Hosts is run.json's record of a multi-host run (threadlab run --hosts):
// every host with its role, platform, fingerprint and host check, the
// generators' clock offsets, and the round trip between generators and
// target. A single-machine run has none.
type Hosts struct {
	Inventory string       `json:"inventory"` // the hosts.yaml the run used
	Hosts     []RemoteHost `json:"hosts"`
	// Offsets are each generator's clock offset from the controller and
	// the round trip it was measured over, per load run (fleet.Drive).
	Offsets []ClockOffset `json:"clock_offsets,omitempty"`
	// RTT is the TCP round trip from each load host to the target host,
	// measured with connects before the first trial.
	RTT []RTT `json:"rtt_to_target,omitempty"`
	// Network is a short probe between every pair of hosts before the
	// first trial (issue 25): TCP connect round trips and a bulk transfer.
	Network []Link `json:"network,omitempty"`
}

// Link is the network from one host to another as the probe found it.
type Link struct {
	From     string  `json:"from"`
	To       string  `json:"to"`
	RTT      RTT     `json:"rtt"`
	MbitS    float64 `json:"mbit_s"`          // Mbit/s of a bulk transfer, timed until the far end had every byte
	Bytes    int64   `json:"bytes"`           // what the transfer sent
	Problems string  `json:"error,omitempty"` // why a figure is missing
}

// RemoteHost is one host of the inventory as the run found it.
type RemoteHost struct {
	Role     string `json:"role"` // target, load, downstream, database
	SSH      string `json:"ssh"`  // destination as written in hosts.yaml
	Address  string `json:"address,omitempty"`
	CPUs     string `json:"cpus,omitempty"`
	Hostname string `json:"hostname,omitempty"` // uname -n
	Platform string `json:"platform,omitempty"` // GOOS/GOARCH
	JavaHome string `json:"java_home,omitempty"`
	JDK      int    `json:"jdk,omitempty"`
	// Fingerprint and Check are the host's own `threadlab fingerprint
	// --json` and `threadlab check --json`, as they printed them.
	Fingerprint json.RawMessage `json:"fingerprint,omitempty"`
	Check       json.RawMessage `json:"host_check,omitempty"`
}

// ClockOffset is one generator's clock against the controller's.
type ClockOffset struct {
	Agent    string  `json:"agent"`
	OffsetMs float64 `json:"offset_ms"`
	RTTMs    float64 `json:"rtt_ms"`
}

// RTT summarizes round trips from one load host to the target host.
type RTT struct {
	From  string  `json:"from"`
	To    string  `json:"to"`
	N     int     `json:"n"`
	MinMs float64 `json:"min_ms"`
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
}

// Names lists the hosts as "role destination (hostname)", for the report.
func (h *Hosts) Names() []string {
	if h == nil {
		return nil
	}
	var out []string
	for _, x := range h.Hosts {
		s := x.Role + " " + x.SSH
		if x.Hostname != "" && x.Hostname != x.SSH {
			s += " (" + x.Hostname + ")"
		}
		out = append(out, s)
	}
	return out
}
