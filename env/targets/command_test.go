package targets

import (
	"archive/zip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCommand(t *testing.T) {
	tests := []struct {
		name    string
		props   map[string]string
		jvmOpts []string
		want    []string
	}{
		{"no props, no options", nil, nil,
			[]string{"/jdk/bin/java", "-jar", "/t/app.jar", "--server.port=8080", "--server.address=127.0.0.1"}},
		{"JVM options keep their order and come before -jar", nil, []string{"-Xmx1g", "-XX:ActiveProcessorCount=2", "-Dreactor.netty.ioWorkerCount=4"},
			[]string{"/jdk/bin/java", "-Xmx1g", "-XX:ActiveProcessorCount=2", "-Dreactor.netty.ioWorkerCount=4", "-jar", "/t/app.jar", "--server.port=8080", "--server.address=127.0.0.1"}},
		{"properties are sorted by key for a stable command line",
			map[string]string{"spring.threads.virtual.enabled": "true", "server.tomcat.threads.max": "400", "spring.datasource.hikari.maximum-pool-size": "50"}, nil,
			[]string{"/jdk/bin/java", "-jar", "/t/app.jar", "--server.port=8080", "--server.address=127.0.0.1", "--server.tomcat.threads.max=400", "--spring.datasource.hikari.maximum-pool-size=50", "--spring.threads.virtual.enabled=true"}},
		{"values with spaces and shell characters stay one argument",
			map[string]string{"spring.datasource.url": "jdbc:postgresql://127.0.0.1:5433/db?a=b&c=d", "x.y": "two words"}, nil,
			[]string{"/jdk/bin/java", "-jar", "/t/app.jar", "--server.port=8080", "--server.address=127.0.0.1", "--spring.datasource.url=jdbc:postgresql://127.0.0.1:5433/db?a=b&c=d", "--x.y=two words"}},
		{"server.port in props is dropped: the port argument wins",
			map[string]string{"server.port": "9999", "a": "1"}, nil,
			[]string{"/jdk/bin/java", "-jar", "/t/app.jar", "--server.port=8080", "--a=1", "--server.address=127.0.0.1"}},
		{"a separate actuator port listens on loopback too",
			map[string]string{"management.server.port": "9090"}, nil,
			[]string{"/jdk/bin/java", "-jar", "/t/app.jar", "--server.port=8080", "--management.server.address=127.0.0.1", "--management.server.port=9090", "--server.address=127.0.0.1"}},
		{"an address the manifest or a host inventory names wins over loopback",
			map[string]string{"server.address": "10.0.0.2"}, nil,
			[]string{"/jdk/bin/java", "-jar", "/t/app.jar", "--server.port=8080", "--server.address=10.0.0.2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Command("/jdk", "/t/app.jar", 8080, tt.props, tt.jvmOpts)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Command =\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}

func TestNames(t *testing.T) {
	got := Names()
	if !slices.Equal(got, []string{"spring-mvc", "spring-webflux"}) {
		t.Fatalf("Names = %v", got)
	}
	got[0] = "mutated"
	if Names()[0] != "spring-mvc" {
		t.Fatal("Names returned the package's own slice")
	}
}

func TestVersionsFromLibNames(t *testing.T) {
	jar := filepath.Join(t.TempDir(), "app.jar")
	f, err := os.Create(jar)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, name := range []string{
		"META-INF/MANIFEST.MF",
		"BOOT-INF/classes/io/threadlab/App.class",
		"BOOT-INF/lib/spring-boot-4.0.7.jar",
		"BOOT-INF/lib/spring-boot-autoconfigure-4.0.7.jar", // must not overwrite spring-boot
		"BOOT-INF/lib/spring-core-7.0.8.jar",
		"BOOT-INF/lib/tomcat-embed-core-11.0.22.jar",
		"BOOT-INF/lib/netty-common-4.2.7.Final.jar",
		"BOOT-INF/lib/netty-transport-native-epoll-4.2.7.Final-linux-x86_64.jar",
		"BOOT-INF/lib/reactor-core-3.8.1.jar",
		"BOOT-INF/lib/reactor-netty-core-1.3.1.jar",
		"BOOT-INF/lib/HikariCP-7.0.2.jar",
		"BOOT-INF/lib/log4j-to-slf4j-2.25.2.jar",
		"BOOT-INF/lib/nested/spring-core-1.0.jar", // not a direct lib
	} {
		if _, err := zw.Create(name); err != nil {
			t.Fatal(err)
		}
	}
	zw.Close()
	f.Close()

	got, err := Versions(jar)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"spring-boot": "4.0.7", "spring-framework": "7.0.8", "tomcat": "11.0.22", "netty": "4.2.7.Final",
		"reactor": "3.8.1", "reactor-netty": "1.3.1", "hikaricp": "7.0.2",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Versions[%q] = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("Versions = %v, want exactly %v", got, want)
	}

	if _, err := Versions(filepath.Join(t.TempDir(), "missing.jar")); err == nil || !strings.Contains(err.Error(), "targets.Build") {
		t.Errorf("missing jar: err = %v, want a hint to build", err)
	}
	plain := filepath.Join(t.TempDir(), "plain.jar")
	pf, _ := os.Create(plain)
	pw := zip.NewWriter(pf)
	pw.Create("a/B.class")
	pw.Close()
	pf.Close()
	if _, err := Versions(plain); err == nil || !strings.Contains(err.Error(), "Spring Boot executable jar") {
		t.Errorf("plain jar: err = %v, want 'Spring Boot executable jar'", err)
	}
}
