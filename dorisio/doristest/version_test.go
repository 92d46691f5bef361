package doristest

import (
	"os"
	"regexp"
	"testing"
)

// The server plays the Doris that the repository's compose file starts by
// default, so that tests here and e2e runs against it expect the same.
func TestDefaultVersionIsTheComposeFilesDefault(t *testing.T) {
	b, err := os.ReadFile("../../integration/doris/docker-compose.yml")
	if err != nil {
		t.Skip("no compose file:", err)
	}
	m := regexp.MustCompile(`DORIS_VERSION:-([0-9.]+)`).FindAllSubmatch(b, -1)
	if len(m) == 0 {
		t.Fatal("docker-compose.yml names no ${DORIS_VERSION:-x.y.z} default")
	}
	for _, v := range m {
		if string(v[1]) != DefaultDorisVersion {
			t.Errorf("docker-compose.yml defaults to Doris %s, DefaultDorisVersion is %s: change table.DefaultVersion with the compose file", v[1], DefaultDorisVersion)
		}
	}
}
