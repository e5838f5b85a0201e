package targets

import (
	"archive/zip"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// versionKeys maps the artifact of a jar in BOOT-INF/lib to the fingerprint
// key it stands for.
var versionKeys = map[string]string{
	"spring-boot":        "spring-boot",
	"spring-core":        "spring-framework",
	"tomcat-embed-core":  "tomcat",
	"netty-common":       "netty",
	"reactor-core":       "reactor",
	"reactor-netty-core": "reactor-netty",
	"HikariCP":           "hikaricp",
	"h2":                 "h2",
	"postgresql":         "postgresql",
	"micrometer-core":    "micrometer",
	"jackson-databind":   "jackson",
}

// libName splits "netty-common-4.2.7.Final.jar" into artifact and version: the
// version starts at the first "-<digit>".
var libName = regexp.MustCompile(`^(.+?)-(\d+(?:\.[0-9A-Za-z]+)*)(?:-[^/]*)?\.jar$`)

// Versions reads the library versions a Spring Boot fat jar ships, from the
// names in BOOT-INF/lib: keys spring-boot, spring-framework, tomcat, netty,
// reactor, reactor-netty, hikaricp, h2, postgresql, micrometer, jackson (only
// those present). The fingerprint records them so runs on different stacks
// are never compared unlabelled.
func Versions(jar string) (map[string]string, error) {
	zr, err := zip.OpenReader(jar)
	if err != nil {
		return nil, fmt.Errorf("read versions of %s: %w (build it with targets.Build)", jar, err)
	}
	defer zr.Close()
	out := map[string]string{}
	libs := 0
	for _, f := range zr.File {
		dir, file := path.Split(f.Name)
		if dir != "BOOT-INF/lib/" || !strings.HasSuffix(file, ".jar") {
			continue
		}
		libs++
		m := libName.FindStringSubmatch(file)
		if m == nil {
			continue
		}
		if key, ok := versionKeys[m[1]]; ok {
			out[key] = m[2]
		}
	}
	if libs == 0 {
		return nil, fmt.Errorf("read versions of %s: no BOOT-INF/lib/*.jar inside; is it a Spring Boot executable jar?", jar)
	}
	return out, nil
}
