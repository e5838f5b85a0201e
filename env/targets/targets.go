// Package targets owns the built-in systems under test: a Maven multi-module
// Spring Boot project in this directory (spring-mvc on Tomcat, platform or
// virtual threads; spring-webflux on Netty/Reactor), built on Boot 4.0.7 in
// place or on another supported line from a generated copy (boot.go), and
// the Go side that finds a JDK, builds the jars once per source change and
// Boot version, and turns a variant
// (jar, port, Spring properties, JVM options) into the argv that starts it.
//
// Data flow: FindJDK -> BuildBoot (source hash + Boot version -> cached jars) -> Command (argv)
// -> the pipeline starts the process, waits for ReadyPath, scrapes
// MetricsPath; Versions feeds the library versions into the fingerprint.
//
// Every endpoint answers with the X-Thread header naming the thread that did
// the work: Tomcat's exec pool (http-nio-<port>-exec-N), virtual-<id> for
// virtual threads, reactor-http-nio-N for Netty's event loops, parallel-N for
// Reactor's parallel scheduler, oversized-N for seed 004's oversized one.
package targets

import (
	"path/filepath"
	"slices"
	"strconv"
)

const (
	// ReadyPath answers 200 with {"status":"UP"} once the target accepts requests
	// (the mvc target seeds its database before it listens).
	ReadyPath = "/actuator/health"
	// MetricsPath is the Prometheus text exposition: jvm_threads_*, jvm_gc_*,
	// jvm_memory_*, tomcat_threads_*, hikaricp_connections_{active,pending,...}.
	MetricsPath = "/actuator/prometheus"
	// ThreadHeader names the thread that handled (or, when the work was moved
	// to a scheduler, did the work of) a request.
	ThreadHeader = "X-Thread"
	// WorkThreadsHeader lists, sorted and comma-separated, the distinct threads
	// that ran the digests of webflux's /work.
	WorkThreadsHeader = "X-Work-Threads"
)

// names are the Maven modules; each builds <name>/target/<name>.jar.
var names = []string{"spring-mvc", "spring-webflux"}

// Names lists the built-in targets: "spring-mvc", "spring-webflux".
func Names() []string { return slices.Clone(names) }

// JarPath is where Build leaves the executable jar of target name under root
// (the env/targets directory).
func JarPath(root, name string) string {
	return filepath.Join(root, name, "target", name+".jar")
}

// Command is the argv that starts a target jar: java, the JVM options in the
// order given, -jar, the port and the loopback address, then every Spring
// property as --key=value sorted by key (a stable command line for the
// report). It is never a shell string. A "server.port" in props is dropped:
// port wins, and a second --server.port would make Spring see "8080,9090".
//
// The target listens on 127.0.0.1 only (server.address, and
// management.server.address should a manifest give actuator its own port):
// the app and /actuator/prometheus are not for the network. A
// "server.address" in props overrides it, for a host inventory that names
// another address.
func Command(javaHome, jar string, port int, props map[string]string, jvmOpts []string) []string {
	argv := []string{filepath.Join(javaHome, "bin", "java")}
	argv = append(argv, jvmOpts...)
	argv = append(argv, "-jar", jar, "--server.port="+strconv.Itoa(port))
	all := map[string]string{"server.address": "127.0.0.1"}
	if _, ok := props["management.server.port"]; ok {
		all["management.server.address"] = "127.0.0.1"
	}
	for k, v := range props {
		all[k] = v
	}
	props = all
	keys := make([]string, 0, len(props))
	for k := range props {
		if k != "server.port" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		argv = append(argv, "--"+k+"="+props[k])
	}
	return argv
}
