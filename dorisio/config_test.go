package dorisio

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	"google.golang.org/protobuf/proto"
)

const testSecret = "s3cr3t-Pipeline-Pw"

// serializedPipeline returns the pipeline proto bytes a runner receives.
func serializedPipeline(t *testing.T, cfg Config) []byte {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	Write(s, cfg, beam.Create(s, optRow{ID: 1}))
	edges, _, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	env, err := graphx.CreateEnvironment(context.Background(), "beam:env:external:v1", func(context.Context) string { return "localhost:0" })
	if err != nil {
		t.Fatal(err)
	}
	pb, err := graphx.Marshal(edges, &graphx.Options{Environment: env})
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return expandBase64(b, 3)
}

var base64Run = regexp.MustCompile(`[A-Za-z0-9+/]{24,}={0,2}`)

// expandBase64 appends the decoded form of every base64 run, recursively:
// Beam stores DoFns as base64 protos holding their JSON.
func expandBase64(b []byte, depth int) []byte {
	out := append([]byte(nil), b...)
	if depth == 0 {
		return out
	}
	for _, run := range base64Run.FindAll(b, -1) {
		if dec, err := base64.StdEncoding.DecodeString(string(run)); err == nil {
			out = append(out, expandBase64(dec, depth-1)...)
		}
	}
	return out
}

func TestSerializedPipelineNeverHoldsThePassword(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte(testSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DORISIO_TEST_PW", testSecret)
	for name, mod := range map[string]func(*Config){
		"PasswordEnv":  func(c *Config) { c.PasswordEnv = "DORISIO_TEST_PW" },
		"PasswordFile": func(c *Config) { c.PasswordFile = pwFile },
		"Password":     func(c *Config) { c.Password = testSecret },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := validConfig()
			mod(&cfg)
			b := serializedPipeline(t, cfg)
			if len(b) < 100 {
				t.Fatalf("serialized pipeline is only %d bytes: the check would prove nothing", len(b))
			}
			if strings.Contains(string(b), testSecret) {
				t.Fatalf("the serialized pipeline contains the password")
			}
			if !strings.Contains(string(b), "PasswordRef") {
				t.Fatalf("the decoded pipeline lacks writeFn's fields: the check inspected the wrong bytes")
			}
			// And the worker side resolves it.
			pw, err := newConnSpec(cfg).password()
			if err != nil || pw != testSecret {
				t.Fatalf("worker-side password = %q, %v", pw, err)
			}
		})
	}
}

func TestPasswordMissingOnWorkerSaysWhatToDo(t *testing.T) {
	_, err := connSpec{PasswordRef: "env:DORISIO_SURELY_UNSET"}.password()
	if err == nil || !strings.Contains(err.Error(), "DORISIO_SURELY_UNSET (Config.PasswordEnv) is not set on this worker") {
		t.Errorf("err = %v", err)
	}
	_, err = connSpec{PasswordRef: "mem:unknown-handle"}.password()
	if err == nil || !strings.Contains(err.Error(), "use Config.PasswordEnv or Config.PasswordFile") {
		t.Errorf("err = %v", err)
	}
}
