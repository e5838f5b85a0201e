package experiments

// DefaultAOTCache is aot_cache when a manifest does not set it: on, since
// the cache only makes starts cheaper (JEP 483/514) and aot-cache.yaml
// checks that it leaves steady-state results alone; if that experiment's
// band claims fail, this must become false and METHODOLOGY.md say why.
const DefaultAOTCache = true

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
