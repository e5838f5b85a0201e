package experiments

import (
	"strings"
	"testing"
)

// TestCommands: lint shows every program a manifest starts, exactly as it
// will be started (never through a shell), with swept values as {key}.
func TestCommands(t *testing.T) {
	src := `name: demo
title: t
question: q
variants:
  platform: {target: spring-mvc, jvm: [-Xmx1g, "-XX:OnError=echo hi"], properties: {spring.threads.virtual.enabled: false}}
  own: {command: [./server, --port, "{port}", --name, "it's"]}
sweep:
  pool: {property: spring.datasource.hikari.maximum-pool-size, values: [5, 10]}
load: {model: closed, users: 10, duration: 2s, requests: [{path: /}]}
pinning: {target: "1", generator: "0"}
trials: 3
`
	m, err := Parse("demo.yaml", []byte(src), "")
	if err != nil {
		t.Fatal(err)
	}
	cs := Commands(m)
	want := []string{
		"taskset -c 1 $JAVA_HOME/bin/java -Xmx1g '-XX:OnError=echo hi' -jar env/targets/spring-mvc/target/spring-mvc.jar --server.port={port} --server.address=127.0.0.1 --spring.datasource.hikari.maximum-pool-size={pool} --spring.threads.virtual.enabled=false",
		`taskset -c 1 ./server --port {port} --name 'it'\''s'`,
	}
	if len(cs) != len(want) {
		t.Fatalf("got %d commands, want %d: %v", len(cs), len(want), cs)
	}
	for i, w := range want {
		if got := cs[i].String(); got != w {
			t.Errorf("command %d:\n got %s\nwant %s", i, got, w)
		}
	}
	if cs[0].Field != "variants.platform.jvm" || cs[1].Field != "variants.own.command" {
		t.Errorf("fields: %q %q", cs[0].Field, cs[1].Field)
	}
	if ws := Lint(m); !strings.Contains(warningsText(ws), `variants.platform.jvm[1]: warning: JVM option "-XX:OnError=echo hi" runs a shell command`) {
		t.Errorf("no trust warning: %v", ws)
	}
}

func warningsText(ws []Warning) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString(w.String() + "\n")
	}
	return b.String()
}
