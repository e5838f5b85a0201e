package diff

import (
	"fmt"
	"slices"
	"strings"

	"github.com/threadlab/threadlab/store/record"
)

// hostsDesign names how the two runs' host layouts differ (issue 25): a
// multi-host run (threadlab run --hosts) against one on a single machine,
// or two multi-host runs on other hosts. Generators on other hosts add a
// network between them and the target and give each role its own CPUs, so
// such a comparison is never silent: each difference goes into Design,
// which every rendering shows first as "did not measure the same thing".
func hostsDesign(a, b *record.Run) []string {
	ha, hb := a.Meta.Hosts, b.Meta.Hosts
	switch {
	case ha == nil && hb == nil:
		return nil
	case ha == nil || hb == nil:
		multi, single, which := hb, "old", "new"
		if hb == nil {
			multi, single, which = ha, "new", "old"
		}
		return []string{fmt.Sprintf("different host layouts: the %s run is multi-host (%s), the %s run ran every role on one machine: the network between generators and target and each role's CPUs differ; compare runs of one layout",
			which, layout(multi), single)}
	}
	var out []string
	if la, lb := layout(ha), layout(hb); la != lb {
		out = append(out, fmt.Sprintf("different host layouts: old %s, new %s", la, lb))
	}
	for _, role := range roles(ha, hb) {
		xa, xb := byRole(ha, role), byRole(hb, role)
		for i := range min(len(xa), len(xb)) {
			if d := hostChanges(xa[i], xb[i]); len(d) > 0 {
				out = append(out, fmt.Sprintf("host %s[%d] differs: %s", role, i, strings.Join(d, ", ")))
			}
		}
	}
	return out
}

// layout is "target, 2 load hosts, downstream": each role and how many
// hosts it had (which machines they were, hostChanges says).
func layout(h *record.Hosts) string {
	var parts []string
	for _, role := range roles(h, nil) {
		xs := byRole(h, role)
		if len(xs) == 1 {
			parts = append(parts, role)
		} else {
			parts = append(parts, fmt.Sprintf("%d %s hosts", len(xs), role))
		}
	}
	return strings.Join(parts, ", ")
}

// roles lists the roles of either record, in first-seen order.
func roles(hs ...*record.Hosts) []string {
	var out []string
	for _, h := range hs {
		if h == nil {
			continue
		}
		for _, x := range h.Hosts {
			if !slices.Contains(out, x.Role) {
				out = append(out, x.Role)
			}
		}
	}
	return out
}

func byRole(h *record.Hosts, role string) []record.RemoteHost {
	var out []record.RemoteHost
	for _, x := range h.Hosts {
		if x.Role == role {
			out = append(out, x)
		}
	}
	return out
}

// hostChanges lists what differs between two hosts of one role that can
// move the numbers: the machine, its platform, its CPUs and its JDK.
func hostChanges(a, b record.RemoteHost) []string {
	var out []string
	for _, f := range []struct{ name, a, b string }{
		{"hostname", a.Hostname, b.Hostname},
		{"platform", a.Platform, b.Platform},
		{"cpus", a.CPUs, b.CPUs},
		{"jdk", jdk(a.JDK), jdk(b.JDK)},
	} {
		if f.a != f.b {
			out = append(out, fmt.Sprintf("%s %s -> %s", f.name, orDash(f.a), orDash(f.b)))
		}
	}
	return out
}

func jdk(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}
