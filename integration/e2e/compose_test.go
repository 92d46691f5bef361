package e2e

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The Doris of integration/doris cannot start here (no container engine),
// so what can be checked without it is: the script parses, and the compose
// file and the script agree on the version, the database and the services
// the script starts (healthchecked) and runs.
func TestComposeFileAndRunScriptAgree(t *testing.T) {
	compose, err := os.ReadFile("../doris/docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("../doris/run-e2e.sh")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("bash", "-n", "../doris/run-e2e.sh").CombinedOutput(); err != nil {
		t.Fatalf("bash -n run-e2e.sh: %v\n%s", err, out)
	}

	versions := map[string]bool{}
	for _, m := range regexp.MustCompile(`image: apache/doris:(fe|be)-\$\{DORIS_VERSION:-([0-9.]+)\}`).FindAllStringSubmatch(string(compose), -1) {
		versions[m[2]] = true
	}
	def := regexp.MustCompile(`DORIS_VERSION="\$\{DORIS_VERSION:-([0-9.]+)\}"`).FindStringSubmatch(string(script))
	if len(versions) != 1 || def == nil || !versions[def[1]] {
		t.Errorf("default Doris versions differ: compose %v, script %v", versions, def)
	}

	// Each service block: "  name:" up to the next one.
	blocks := map[string]string{}
	parts := regexp.MustCompile(`(?m)^  (\w+):\n`).FindAllStringSubmatchIndex(string(compose), -1)
	for i, p := range parts {
		end := len(compose)
		if i+1 < len(parts) {
			end = parts[i+1][0]
		}
		blocks[string(compose[p[2]:p[3]])] = string(compose[p[1]:end])
	}
	for _, svc := range []string{"fe", "be"} {
		if !strings.Contains(blocks[svc], "healthcheck:") {
			t.Errorf("service %s has no healthcheck; the script waits on it", svc)
		}
	}
	if !strings.Contains(blocks["init"], "./init.sql:/init.sql") || !strings.Contains(blocks["init"], "condition: service_healthy") {
		t.Errorf("service init does not run init.sql after the BE is healthy:\n%s", blocks["init"])
	}
	for _, want := range []string{"up -d --wait fe be", "run --rm init", "DORISIO_TEST_DB=" + e2eDB, "./integration/e2e/"} {
		if !strings.Contains(string(script), want) {
			t.Errorf("run-e2e.sh lacks %q", want)
		}
	}
}
