package experiments

import (
	"bytes"
	"fmt"

	"gopkg.in/yaml.v3"
)

// Marshal writes the normalized manifest as run: profile applied, defaults
// filled, profiles dropped (the one applied is named in profile:).
func Marshal(m *Manifest) ([]byte, error) {
	c := *m
	c.Profiles = nil
	var buf bytes.Buffer
	buf.WriteString("# normalized by threadlab: the manifest exactly as run, defaults filled in\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&c); err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	return buf.Bytes(), enc.Close()
}
