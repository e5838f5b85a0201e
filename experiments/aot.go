package experiments

// DefaultAOTCache is aot_cache when a manifest does not set it: off. It makes
// starts 1.7-2.3x cheaper here (JEP 483/514), but a cache also carries
// training-run profiles, and "only startup changes" is a claim to measure,
// not to assume. experiments/aot-cache.yaml's run 20261203T215206Z measured
// it for Spring MVC under the until-steady warm-up (all five band claims
// supported, the I/O burst within 0.3%); the catalog also starts WebFlux
// targets, which that run did not measure, so the default waits for a
// WebFlux arm. Turn it on per manifest with aot_cache: true.
const DefaultAOTCache = false

// normalizeAOT makes aot_cache explicit, so the manifest saved with a run
// says whether its targets started from the cache.
func (m *Manifest) normalizeAOT() {
	if m.AOTCache == nil {
		on := DefaultAOTCache
		m.AOTCache = &on
	}
}

// AOT reports whether built-in targets start from the JDK AOT cache.
func (m *Manifest) AOT() bool {
	if m.AOTCache == nil {
		return DefaultAOTCache
	}
	return *m.AOTCache
}
