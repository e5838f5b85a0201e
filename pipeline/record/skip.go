package record

// SkippedVariant is a variant of the manifest that did not run on this
// host, and why: the JDK it asks for is not installed, or the targets
// cannot run on it.
type SkippedVariant struct {
	Variant string `json:"variant"`
	JDK     int    `json:"jdk,omitempty"` // the feature release the variant asked for
	Reason  string `json:"reason"`
}
