package experiments

import (
	"slices"
	"strings"

	"github.com/threadlab/threadlab/env/targets"
)

// normalizeBoot makes spring_boot explicit when a manifest has built-in
// targets: the manifest's line (targets.DefaultBoot when unset) goes on
// every built-in variant without its own, and every value that names a
// supported line is written as the version built for it ("4.1" becomes
// "4.1.2"). A value that names no supported line stays as written, and is
// not copied onto the variants, so validate reports it once, where it was
// written.
func (m *Manifest) normalizeBoot() {
	if !slices.ContainsFunc(m.Variants, func(v Variant) bool { return v.Target != "" }) {
		return
	}
	if m.SpringBoot == "" {
		m.SpringBoot = targets.DefaultBoot
	}
	top, topErr := targets.ResolveBoot(m.SpringBoot)
	if topErr == nil {
		m.SpringBoot = top.Version
	}
	for i := range m.Variants {
		v := &m.Variants[i]
		if v.Target == "" {
			continue
		}
		if v.SpringBoot == "" && topErr == nil {
			v.SpringBoot = top.Version
		}
		if b, err := targets.ResolveBoot(v.SpringBoot); err == nil {
			v.SpringBoot = b.Version
		}
	}
}

// validateBoot checks the manifest's spring_boot (the variants' own are
// checked with the variant).
func (m *Manifest) validateBoot(bad badFunc) {
	if m.SpringBoot == "" || len(m.Variants) == 0 { // no variants is its own error
		return
	}
	if !slices.ContainsFunc(m.Variants, func(v Variant) bool { return v.Target != "" }) {
		bad("spring_boot", "spring_boot applies to built-in targets only, and every variant here is a command (remove spring_boot)")
		return
	}
	if _, err := targets.ResolveBoot(m.SpringBoot); err != nil {
		bad("spring_boot", "%v", err)
	}
}

// seedBoot is the Spring Boot each seed ran, by the number its write-up
// is cited with in source: ("002: ...").
var seedBoot = map[string]string{"000": "4.1.1", "001": "4.0.7", "002": "4.1.0", "003": "4.1.2", "004": "3.5.16"}

// lintBoot warns when no built-in variant runs on the line of the seed the
// manifest cites: a difference from the seed could then be the Boot's
// (Tomcat, Reactor Netty, Jackson differ between lines), not the model's.
func (m *Manifest) lintBoot(warn func(string, string, ...any)) {
	seed, _, ok := strings.Cut(m.Source, ":")
	ran, known := seedBoot[seed]
	if !ok || !known {
		return
	}
	want, err := targets.ResolveBoot(ran[:strings.LastIndex(ran, ".")])
	if err != nil {
		return
	}
	builtin := false
	for _, v := range m.Variants {
		if v.Target == "" {
			continue
		}
		builtin = true
		if v.SpringBoot == want.Version {
			return
		}
	}
	if builtin {
		warn("spring_boot", "seed %s ran Spring Boot %s, but no variant here runs the %s line (they run %s): a difference from the seed may be the Boot's; write spring_boot: %s", seed, ran, want.Line, m.SpringBoot, want.Line)
	}
}
