package streamload

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Malformed addresses that carry a password: refused, and no
// part of what could be the password reaches the message.
func TestMalformedAddressesAreRefusedWithoutAnyPartOfThePassword(t *testing.T) {
	tests := []struct {
		name  string
		addr  string
		parts []string // password fragments that must not appear
	}{
		{"the scheme forgotten", "loader:Sup3rS3cret@fe:8030", []string{"Sup3r", "S3cret", "loader:"}},
		{"a password with a slash", "http://loader:Sup3r/S3cret@fe:8030", []string{"Sup3r", "S3cret"}},
		{"a numeric password with a slash (accepted before)", "http://loader:12345/S3cret@fe:8030", []string{"12345", "S3cret"}},
		{"the suite's password, scheme forgotten", "loader:" + testPassword + "@fe:8030", secretForms()},
		{"the suite's password with a slash", "http://loader:" + strings.Replace(testPassword, "-", "/", 1) + "@fe:8030", []string{"s3cr3t", "P@ss"}},
		{"a password with a hash", "http://loader:ab#cd@fe:8030", []string{"ab#cd", "#cd"}},
		{"a password in a query", "http://fe:8030/?password=Sup3rS3cret", []string{"Sup3rS3cret", "password="}},
		{"a password in a fragment", "http://fe:8030/#Sup3rS3cret", []string{"Sup3rS3cret"}},
		// Before, the scheme or host checks quoted these whole.
		{"a password in a query, scheme forgotten", "fe:8030?password=Sup3rS3cret", []string{"Sup3rS3cret", "password="}},
		{"a password in a fragment, scheme forgotten", "fe:8030/#Sup3rS3cret", []string{"Sup3rS3cret"}},
		{"a password in a query, no host", "http://?password=Sup3rS3cret", []string{"Sup3rS3cret", "password="}},
		{"a password in a query, not a URL", ":8030?password=Sup3rS3cret", []string{"Sup3rS3cret", "password="}},
		{"a password in an empty query's place", "fe:8030/?#Sup3rS3cret", []string{"Sup3rS3cret"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, field := range []string{"FEs", "BEs"} {
				cfg := Config{FEs: []string{"http://fe:8030"}, User: "loader", Password: testPassword}
				if field == "FEs" {
					cfg.FEs = []string{"http://fe:8030", tc.addr}
				} else {
					cfg.BEs = []string{tc.addr}
				}
				_, err := New(cfg)
				record(err)
				if err == nil {
					t.Fatalf("Config.%s with %q was accepted", field, tc.addr)
				}
				for _, p := range tc.parts {
					if strings.Contains(err.Error(), p) {
						t.Errorf("error %q shows %q", err, p)
					}
				}
				if !strings.Contains(err.Error(), "Config."+field+"[") || !strings.Contains(err.Error(), "want http://host:port") {
					t.Errorf("error %q should name the element and the shape wanted", err)
				}
			}
		})
	}
}

// Redaction does not depend on the password's length: user-info and Basic
// values always go; a short password goes as a whole word only.
func TestShortPasswordsAreRedactedToo(t *testing.T) {
	for _, pw := range []string{"Zq", "7", "pa55w"} {
		t.Run(pw, func(t *testing.T) {
			r := newRedactor("loader", pw)
			basic := base64.StdEncoding.EncodeToString([]byte("loader:" + pw))
			in := "Location: http://loader:" + pw + "@be:8040/api?x; Authorization: Basic " + basic + "; the password " + pw + " was refused; table " + pw + "x, id 1" + pw
			out := r.redact(in)
			for _, leak := range []string{"loader:" + pw + "@", basic, " " + pw + " "} {
				if strings.Contains(out, leak) {
					t.Errorf("redact(%q) = %q still holds %q", in, out, leak)
				}
			}
			if !strings.Contains(out, pw+"x") || !strings.Contains(out, "1"+pw) {
				t.Errorf("redact(%q) = %q: longer words containing the password must stay", in, out)
			}
		})
	}
}

// End to end with a two-letter password echoed by a proxy and by Doris.
func TestAShortPasswordNeverReachesAnErrorOrALogLine(t *testing.T) {
	const pw = "Zq"
	basic := base64.StdEncoding.EncodeToString([]byte(testUser + ":" + pw))
	echo := "Location: http://" + testUser + ":" + pw + "@be:8040/ Authorization: Basic " + basic + " password " + pw + "."
	beSrv := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(502)
		io.WriteString(w, "<html>proxy says "+echo+"</html>")
	})
	var buf lockedBuffer
	c, _ := newClient(t, []string{feRedirecting(t, beSrv, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"msg":"Error","code":1,"data":"`+echo+`","count":0}`)
	}).URL}, func(c *Config) { c.Password, c.Logger, c.Retry.MaxAttempts = pw, suiteSlogTo(&buf), 1 })
	_, err := c.Load(context.Background(), loadReq("short_pw", true, "1\n"))
	mustKind(t, err, ErrOutcomeUnknown)
	for _, s := range []string{err.Error(), buf.String()} {
		for _, leak := range []string{":" + pw + "@", basic, " " + pw + "."} {
			if strings.Contains(s, leak) {
				t.Errorf("%q leaked in: %.300s", leak, s)
			}
		}
	}
}
