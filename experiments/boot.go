package experiments

import (
	"slices"

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
	if m.SpringBoot == "" {
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
