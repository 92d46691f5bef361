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
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"google.golang.org/protobuf/proto"
)

const testSecret = "s3cr3t-Pipeline-Pw"

// pipelineProto builds a pipeline with build and returns the proto a
// runner receives.
func pipelineProto(t *testing.T, build func(s beam.Scope)) *pipepb.Pipeline {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	build(s)
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
	return pb
}

// serializedPipeline returns the pipeline proto bytes a runner receives.
func serializedPipeline(t *testing.T, cfg Config) []byte {
	t.Helper()
	pb := pipelineProto(t, func(s beam.Scope) { Write(s, cfg, beam.Create(s, optRow{ID: 1})) })
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
			pw, err := newConnSpec(cfg).Password()
			if err != nil || pw != testSecret {
				t.Fatalf("worker-side password = %q, %v", pw, err)
			}
		})
	}
}

// Addresses that carry a password stop construction with a
// message that names the element and shows no part of the password; with
// the address fixed, the serialized pipeline holds no password either.
func TestMalformedAddressesStopConstructionWithoutShowingThePassword(t *testing.T) {
	for _, tc := range []struct {
		addr  string
		parts []string
	}{
		{"loader:Sup3rS3cret@fe:8030", []string{"Sup3r", "S3cret"}},
		{"http://loader:Sup3r/S3cret@fe:8030", []string{"Sup3r", "S3cret"}},
		{"http://loader:12345/S3cret@fe:8030", []string{"12345", "S3cret"}},
		{"http://loader:" + testSecret + "@fe:8030", []string{testSecret, "Pipeline-Pw"}},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			cfg := validConfig()
			cfg.FEs = []string{"http://fe1:8030", tc.addr}
			cfg.Password = testSecret
			msg := constructionPanic(cfg, optRow{})
			if !strings.HasPrefix(msg, "dorisio.Write: Config.FEs[1] (not shown") {
				t.Errorf("panic = %q, want it to name Config.FEs[1] without showing it", msg)
			}
			for _, p := range tc.parts {
				if strings.Contains(msg, p) {
					t.Errorf("panic %q shows %q", msg, p)
				}
			}
			cfg.FEs = []string{"http://fe1:8030", "http://fe:8030"}
			if b := serializedPipeline(t, cfg); strings.Contains(string(b), testSecret) || strings.Contains(string(b), "S3cret") {
				t.Errorf("the serialized pipeline holds the password")
			}
		})
	}
}
