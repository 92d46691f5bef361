package streamload

import (
	"encoding/base64"
	"net/url"
	"regexp"
	"strings"
)

// Credentials can show up in text the client quotes (a proxy page, a
// Location echoed in a body, an FE message) in a few shapes: URL user-info
// (user:password@host), a Basic Authorization value, or the password
// itself, plain or escaped. redactor removes all of them, whatever the
// password's length: the shapes are matched by form, and short password
// forms only as whole words, so that a one-letter password does not turn
// every such letter into ***.
type redactor struct {
	anywhere []string         // long password forms, replaced wherever they occur
	words    []*regexp.Regexp // short password forms, replaced as whole words
}

var (
	// scheme://user-info@ (any user-info, ours or not).
	reUserInfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@"'<>]*@`)
	// A Basic credentials value, in an Authorization header or anywhere.
	reBasic = regexp.MustCompile(`(?i)\b(Basic\s+)[A-Za-z0-9+/]{4,}={0,2}`)
)

// redactBasic redacts one "Basic <value>" match unless the value is a
// lower-case word: Doris' own "no valid Basic authorization" (BE, every
// version) names no credentials, and hiding its last word hid the cause.
// The client's own credentials are redacted by form whatever they look
// like (newRedactor).
func redactBasic(m string) string {
	sub := reBasic.FindStringSubmatch(m)
	value := m[len(sub[1]):]
	if strings.ToLower(value) == value && strings.Trim(value, "abcdefghijklmnopqrstuvwxyz") == "" {
		return m
	}
	return sub[1] + "***"
}

// shortSecret is the length below which a password form is matched only as
// a whole word.
const shortSecret = 8

func newRedactor(user, password string) redactor {
	var r redactor
	forms := []string{base64.StdEncoding.EncodeToString([]byte(user + ":" + password))}
	if password != "" {
		forms = append(forms, password, url.QueryEscape(password), url.PathEscape(password),
			url.UserPassword(user, password).String())
	}
	seen := map[string]bool{}
	for _, f := range forms {
		switch {
		case seen[f]:
		case len(f) >= shortSecret:
			r.anywhere = append(r.anywhere, f)
		default:
			r.words = append(r.words, regexp.MustCompile(`(^|[^A-Za-z0-9_])`+regexp.QuoteMeta(f)+`($|[^A-Za-z0-9_])`))
		}
		seen[f] = true
	}
	return r
}

// redact removes credentials from s.
func (r redactor) redact(s string) string {
	s = reUserInfo.ReplaceAllString(s, "${1}***@")
	s = reBasic.ReplaceAllStringFunc(s, redactBasic)
	for _, f := range r.anywhere {
		s = strings.ReplaceAll(s, f, "***")
	}
	for _, re := range r.words {
		s = re.ReplaceAllString(s, "${1}***${2}")
	}
	return s
}
