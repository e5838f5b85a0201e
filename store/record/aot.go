package record

// AOTStart is how one variant's target starts with respect to the JDK AOT
// cache, in run.json: what was asked (the manifest's aot_cache) and what
// was used, so a reader can tell a cached start from a fallback.
type AOTStart struct {
	Variant string   `json:"variant"`
	Target  string   `json:"target"`
	Asked   bool     `json:"asked"`              // the manifest's aot_cache
	Used    bool     `json:"used"`               // started with -XX:AOTCache
	Jar     string   `json:"jar"`                // the jar the target starts from
	Cache   string   `json:"cache,omitempty"`    // the .aot file, when used
	JVMArgs []string `json:"jvm_args,omitempty"` // appended to the variant's own
	// Note says why the cache was not used when it was asked for: the
	// variant sets an AOT option itself, or the training failed (e.g. a
	// JDK before 25) and the target runs without it.
	Note      string  `json:"note,omitempty"`
	TrainedMs float64 `json:"trained_ms,omitempty"`
}
